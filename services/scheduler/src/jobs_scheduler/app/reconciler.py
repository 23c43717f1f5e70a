"""The reconciler: queued jobs whose ready message the broker lost (neither consumed nor
dead-lettered in time) are dispatched again, within the same limit as ready messages that
died in the broker (``domain/ready_messages.py``); past it the job is dead. Safe with several
replicas (``SKIP LOCKED``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_scheduler.adapters import attempts, job_writes, jobs
from jobs_scheduler.adapters.jobs import JobRow
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.app.failures import mark_dead
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.ready_messages import after_dead_lettered

S = JobStatus
# Neither consumed nor dead-lettered in time: the broker lost it, or the relay published it
# unconfirmed and the broker never took it (the dispatch left the outbox either way).
LOST = "the ready message was neither consumed nor dead-lettered in time"


async def reconcile_lost_dispatches(
    connection: AsyncConnection,
    changes: Changes,
    limit: int,
    after_seconds: float,
    defaults: JobDefaults,
) -> int:
    """Queued jobs whose ready message was neither consumed nor dead-lettered within
    ``after_seconds`` of the broker taking it (``queued_at``; none while the dispatch is still
    in the outbox): the broker lost it. Re-dispatch under a new attempt number (so a late copy
    of the old message is fenced off) without spending the job's retry budget, while fewer
    than ``ttl_redispatch_limit`` of its ready messages died or were lost; then the job is
    dead. Returns how many were handled."""
    lost = await jobs.lock_unconsumed_queued(connection, limit, after_seconds)
    # In job id order, the lock order of every batch.
    again: list[JobRow] = []
    limit_reached: list[JobRow] = []
    for row in sorted(lost, key=lambda row: row.id):
        action = after_dead_lettered(
            expired_count=row.expired_count, limit=defaults.ttl_redispatch_limit
        )
        (again if action == "redispatch" else limit_reached).append(row)
    moves = [
        Transition(row.id, S.QUEUED, S.QUEUED, "ready message lost; re-dispatched") for row in again
    ]
    redispatched = await apply_transitions(connection, changes, moves, job_writes.REDISPATCH_LOST)
    for move in moves:
        job = redispatched.get(move.key)
        if job is None:
            continue
        await attempts.finish(
            connection,
            job.id,
            job.attempt - 1,
            status="lost",
            error_class="DispatchLost",
            error=LOST,
        )
        changes.dispatch(job, attempt=job.attempt, new_attempt=True)
    dead = 0
    for job in limit_reached:  # locked above, with every column mark_dead needs
        await attempts.finish(
            connection,
            job.id,
            job.attempt,
            status="lost",
            error_class="DispatchLost",
            error=LOST,
        )
        if await mark_dead(
            connection,
            changes,
            job,
            current=S.QUEUED,
            reason="ttl_expired",
            error=f"ready message lost or expired {job.expired_count + 1} times without a worker",
            error_class="ReadyMessageLost",
        ):
            dead += 1
    return len(redispatched) + dead
