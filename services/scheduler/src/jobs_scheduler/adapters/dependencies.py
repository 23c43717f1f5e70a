"""Dependencies: blocked jobs whose parents all ended run (or wait for their ``run_at``), or
are dead when a parent did not succeed. Safe with several replicas (``SKIP LOCKED``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import job_dependencies, jobs
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.failures import mark_dead
from jobs_scheduler.adapters.jobs import dispatch_next_attempts, lock_job
from jobs_scheduler.adapters.status import Transition, apply_transitions

S = JobStatus
_TERMINAL = (S.SUCCEEDED.value, S.DEAD.value, S.CANCELLED.value)


async def release_blocked(connection: AsyncConnection, changes: Changes, limit: int) -> int:
    """Blocked jobs whose parents all ended: run them, or fail them when a parent failed.

    A parent that is not recorded yet (its message is still on the way) keeps the child
    blocked.
    """
    parent = jobs.alias("parent")
    unfinished_parent = exists().where(
        job_dependencies.c.job_id == jobs.c.id,
        ~exists().where(
            and_(parent.c.id == job_dependencies.c.depends_on, parent.c.status.in_(_TERMINAL))
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
    for row in ready:
        failed_parents = (
            await connection.execute(
                select(parent.c.id, parent.c.status)
                .select_from(
                    job_dependencies.join(parent, parent.c.id == job_dependencies.c.depends_on)
                )
                .where(job_dependencies.c.job_id == row.id, parent.c.status != S.SUCCEEDED.value)
            )
        ).all()
        if failed_parents:
            job = await lock_job(connection, row.id, None, (S.BLOCKED.value,))
            assert job is not None
            first = failed_parents[0]
            await mark_dead(
                connection,
                changes,
                job,
                current=S.BLOCKED,
                reason="dependency_failed",
                error=f"parent job {first.id} ended {first.status}",
                error_class="DependencyFailed",
            )
        elif row.run_at is not None and row.run_at > (await _now(connection)):
            later = Transition(
                row.id,
                S.BLOCKED,
                S.SCHEDULED,
                f"runs at {row.run_at.isoformat()}",
                via=((S.PENDING, "parents succeeded"),),
            )
            await apply_transitions(connection, changes, [later])
        else:
            ready_now = Transition(row.id, S.BLOCKED, S.QUEUED, "parents succeeded")
            await dispatch_next_attempts(connection, changes, [ready_now])
    return len(ready)


async def _now(connection: AsyncConnection) -> Any:
    return (await connection.execute(select(func.now()))).scalar_one()
