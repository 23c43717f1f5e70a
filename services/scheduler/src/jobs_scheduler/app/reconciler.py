"""The reconciler: queued jobs whose ready message the broker lost (neither consumed nor
dead-lettered in time) are dispatched again, within the same limit as ready messages that
died in the broker (``domain/ready_messages.py``); past it the job is dead. Safe with several
replicas (``SKIP LOCKED``)."""

from __future__ import annotations

from sqlalchemy import exists, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import jobs, outbox
from jobs_scheduler.adapters import attempts
from jobs_scheduler.adapters.jobs import DISPATCH_COLUMNS, JOB_COLUMNS, JobRow
from jobs_scheduler.adapters.set_based import interval_seconds
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, Write, apply_transitions
from jobs_scheduler.app.failures import mark_dead
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.ready_messages import after_dead_lettered

S = JobStatus

# queued -> queued under a new attempt number, which does not spend the retry budget; the
# lost message counts like one that died in the broker.
REDISPATCH_LOST = Write(
    "redispatch_lost",
    sets=lambda r: {
        "attempt": jobs.c.attempt + 1,
        "attempt_limit": jobs.c.attempt_limit + 1,
        "expired_count": jobs.c.expired_count + 1,
    },
    returning=DISPATCH_COLUMNS,
)


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
    lost = (
        await connection.execute(
            select(*JOB_COLUMNS)
            .where(
                jobs.c.status == S.QUEUED.value,
                jobs.c.queued_at < func.now() - interval_seconds(after_seconds),
                # Not while its dispatch is still waiting in the outbox (the broker is away).
                ~exists().where(outbox.c.job_id == jobs.c.id),
            )
            .order_by(jobs.c.queued_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    ).all()
    # In job id order, the lock order of every batch.
    again: list[JobRow] = []
    limit_reached: list[JobRow] = []
    for row in sorted(lost, key=lambda row: row.id):
        action = after_dead_lettered(
            expired_count=row.expired_count, limit=defaults.ttl_redispatch_limit
        )
        (again if action == "redispatch" else limit_reached).append(row)
    moves = [
        Transition(row.id, S.QUEUED, S.QUEUED, "ready message lost by the broker; re-dispatched")
        for row in again
    ]
    redispatched = await apply_transitions(connection, changes, moves, REDISPATCH_LOST)
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
            error="the broker lost the ready message",
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
            error="the broker lost the ready message",
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
