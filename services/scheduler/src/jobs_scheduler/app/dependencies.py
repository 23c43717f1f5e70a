"""Dependencies: blocked jobs whose parents all ended run (or wait for their ``run_at``), or
are dead when a parent did not succeed. Safe with several replicas (``SKIP LOCKED``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_scheduler.adapters import jobs
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
    ready = await jobs.lock_blocked_with_parents_ended(connection, limit, ENDED)
    if not ready:
        return 0
    now = await jobs.database_now(connection)
    for row in ready:
        parents = await jobs.parents_of(connection, row.id)
        release = after_parents_ended(parents, run_at=row.run_at, now=now)
        if release.action == "dead":
            job = await jobs.lock_job(connection, row.id, None, (S.BLOCKED.value,))
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
            await jobs.dispatch_next_attempts(connection, changes, [ready_now])
    return len(ready)
