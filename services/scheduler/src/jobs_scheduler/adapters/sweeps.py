"""Time-driven sweeps, each safe with several scheduler replicas (``FOR UPDATE SKIP LOCKED``):
promotion of due jobs, release of blocked jobs, re-dispatch of lost dispatches, and the
handling of ready messages the broker dead-lettered."""

from __future__ import annotations

from sqlalchemy import and_, exists, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobDispatch, JobStatus
from jobs_common.jobstore import job_dependencies, jobs
from jobs_common.topology import DEAD
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.commands import claim_inbox
from jobs_scheduler.adapters.jobs import (
    DISPATCH_COLUMNS,
    JobDefaults,
    finish_attempt,
    lock_job,
    mark_dead,
)
from jobs_scheduler.adapters.recording import dispatch_first_attempt

S = JobStatus
_TERMINAL = (S.SUCCEEDED.value, S.DEAD.value, S.CANCELLED.value)


async def promote_due(connection: AsyncConnection, changes: Changes, limit: int) -> int:
    """Dispatch scheduled jobs whose time has come (delays, retry backoffs, paced requeues)."""
    due = (
        select(jobs.c.id)
        .where(jobs.c.status == S.SCHEDULED.value, jobs.c.run_at <= func.now())
        .order_by(jobs.c.run_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .cte("due")
    )
    promoted = await connection.execute(
        update(jobs)
        .where(jobs.c.id == due.c.id)
        .values(
            status=S.QUEUED.value, attempt=jobs.c.attempt + 1, run_at=None, updated_at=func.now()
        )
        .returning(*DISPATCH_COLUMNS)
    )
    count = 0
    for job in sorted(promoted, key=lambda j: j.id):
        changes.move(job.id, job.attempt, S.SCHEDULED, S.QUEUED, "due")
        changes.dispatch(job, attempt=job.attempt, new_attempt=True)
        count += 1
    return count


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
            changes.move(row.id, 0, S.BLOCKED, S.PENDING, "parents succeeded")
            changes.move(row.id, 0, S.PENDING, S.SCHEDULED, f"runs at {row.run_at.isoformat()}")
            await connection.execute(
                update(jobs).where(jobs.c.id == row.id).values(status=S.SCHEDULED.value)
            )
        else:
            await dispatch_first_attempt(
                connection, changes, row.id, S.BLOCKED, "parents succeeded"
            )
    return len(ready)


async def _now(connection: AsyncConnection) -> object:
    return (await connection.execute(select(func.now()))).scalar_one()


async def reconcile_lost_dispatches(
    connection: AsyncConnection, changes: Changes, limit: int, after_seconds: float
) -> int:
    """Queued jobs whose ready message was neither consumed nor dead-lettered in time: the
    broker lost it. Re-dispatch under a new attempt number (so a late copy of the old message
    is fenced off) without spending the job's retry budget."""
    lost = (
        select(jobs.c.id)
        .where(
            jobs.c.status == S.QUEUED.value,
            jobs.c.queued_at < func.now() - func.make_interval(0, 0, 0, 0, 0, 0, after_seconds),
        )
        .order_by(jobs.c.queued_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .cte("lost")
    )
    redispatched = await connection.execute(
        update(jobs)
        .where(jobs.c.id == lost.c.id)
        .values(
            attempt=jobs.c.attempt + 1,
            attempt_limit=jobs.c.attempt_limit + 1,
            updated_at=func.now(),
        )
        .returning(*DISPATCH_COLUMNS)
    )
    count = 0
    for job in sorted(redispatched, key=lambda j: j.id):
        await finish_attempt(
            connection,
            job.id,
            job.attempt - 1,
            status="lost",
            error_class="DispatchLost",
            error="the broker lost the ready message",
        )
        changes.move(
            job.id,
            job.attempt,
            S.QUEUED,
            S.QUEUED,
            "ready message lost by the broker; re-dispatched",
        )
        changes.dispatch(job, attempt=job.attempt, new_attempt=True)
        count += 1
    return count


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
    if job.expired_count < defaults.ttl_redispatch_limit:
        changes.move(
            job.id, job.attempt, S.QUEUED, S.QUEUED, f"ready message {death_reason}; re-dispatched"
        )
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == job.id)
            .values(expired_count=jobs.c.expired_count + 1, updated_at=func.now())
        )
        changes.dispatch(job, attempt=job.attempt, new_attempt=False)
        return "redispatched"
    await finish_attempt(connection, job.id, job.attempt, status="expired")
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
