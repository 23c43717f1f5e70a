"""Broker dead letters (``jobs.dead``): ready messages that expired unconsumed or that a worker
rejected come back through ``jobs.dlx``; the attempt is dispatched again up to the TTL
re-dispatch limit (``domain/ready_messages.py``), then the job is dead."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobDispatch, JobStatus
from jobs_common.topology import DEAD
from jobs_scheduler.adapters import attempts, job_writes
from jobs_scheduler.adapters.inbox import claim_inbox
from jobs_scheduler.adapters.jobs import lock_job
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.app.failures import mark_dead
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.ready_messages import after_dead_lettered

S = JobStatus


async def apply_dead_lettered(
    connection: AsyncConnection,
    changes: Changes,
    message: JobDispatch,
    *,
    death_reason: str,
    defaults: JobDefaults,
) -> str:
    """A ready message came back through jobs.dlx (expired or rejected) before it ran.

    Each dispatch has its own message id: recording it in ``inbox`` makes a redelivery of
    the same dead-lettered message (a crash before its ack) re-dispatch nothing.
    """
    if not await claim_inbox(connection, message.message_id, DEAD):
        return "duplicate"
    job = await lock_job(connection, message.job_id, message.attempt, (S.QUEUED.value,))
    if job is None:
        return "stale"
    action = after_dead_lettered(
        expired_count=job.expired_count, limit=defaults.ttl_redispatch_limit
    )
    if action == "redispatch":
        again = Transition(
            job.id,
            S.QUEUED,
            S.QUEUED,
            f"ready message {death_reason}; re-dispatched",
            attempt=job.attempt,
        )
        if not await apply_transitions(connection, changes, [again], job_writes.REDISPATCH_EXPIRED):
            return "stale"
        changes.dispatch(job, attempt=job.attempt, new_attempt=False)
        return "redispatched"
    await attempts.finish(connection, job.id, job.attempt, status="expired")
    await mark_dead(
        connection,
        changes,
        job,
        current=S.QUEUED,
        reason="ttl_expired",
        error=f"ready message {death_reason} {job.expired_count + 1} times without a worker",
        error_class="ReadyMessageExpired",
    )
    return "dead"
