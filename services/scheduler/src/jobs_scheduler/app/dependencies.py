"""Dependencies: blocked jobs whose parents all ended run (or wait for their ``run_at``), or
are dead when a parent did not succeed. Safe with several replicas (``SKIP LOCKED``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, exists, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import job_dependencies, jobs
from jobs_scheduler.adapters.jobs import dispatch_next_attempts, lock_job
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.app.failures import mark_dead
from jobs_scheduler.domain.dependencies import ENDED, after_parents_ended

S = JobStatus


async def release_blocked(connection: AsyncConnection, changes: Changes, limit: int) -> int:
    """Blocked jobs whose parents all ended: run them, or fail them when a parent failed.

    A parent that is not recorded yet (its message is still on the way) keeps the child
    blocked.
    """
    parent = jobs.alias("parent")
    unfinished_parent = exists().where(
        job_dependencies.c.job_id == jobs.c.id,
        ~exists().where(
            and_(parent.c.id == job_dependencies.c.depends_on, parent.c.status.in_(ENDED))
        ),
    )
    ready = (
        await connection.execute(
            select(jobs.c.id, jobs.c.run_at)
            .where(jobs.c.status == S.BLOCKED.value, ~unfinished_parent)
            .order_by(jobs.c.created_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    ).all()
    if not ready:
        return 0
    now = await _now(connection)
    for row in ready:
        parents = (
            await connection.execute(
                select(parent.c.id, parent.c.status)
                .select_from(
                    job_dependencies.join(parent, parent.c.id == job_dependencies.c.depends_on)
                )
                .where(job_dependencies.c.job_id == row.id)
                .order_by(job_dependencies.c.depends_on)
            )
        ).all()
        release = after_parents_ended(
            [(p.id, p.status) for p in parents], run_at=row.run_at, now=now
        )
        if release.action == "dead":
            job = await lock_job(connection, row.id, None, (S.BLOCKED.value,))
            assert job is not None
            await mark_dead(
                connection,
                changes,
                job,
                current=S.BLOCKED,
                reason="dependency_failed",
                error=release.reason,
                error_class="DependencyFailed",
            )
        elif release.action == "scheduled":
            later = Transition(
                row.id,
                S.BLOCKED,
                S.SCHEDULED,
                release.reason,
                via=((S.PENDING, "parents succeeded"),),
            )
            await apply_transitions(connection, changes, [later])
        else:
            ready_now = Transition(row.id, S.BLOCKED, S.QUEUED, release.reason)
            await dispatch_next_attempts(connection, changes, [ready_now])
    return len(ready)


async def _now(connection: AsyncConnection) -> datetime:
    now: datetime = (await connection.execute(select(func.now()))).scalar_one()
    return now
