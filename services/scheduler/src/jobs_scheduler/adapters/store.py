"""Job store operations: each takes an open transaction and a :class:`Changes` collector.

Messages of one batch are applied in one transaction, sorted by job id so that concurrent
scheduler replicas lock rows in the same order. Every update is fenced on ``(id, attempt)``
and guarded by the statuses the transition table allows; a message that matches nothing is
stale and changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from sqlalchemy import and_, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import (
    ErrorKind,
    JobDispatch,
    JobResult,
    JobRunning,
    JobStatus,
    JobSubmitted,
    RetryRequested,
)
from jobs_common.jobstore import dead_letters, inbox, job_attempts, jobs, poison_messages
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.domain.decisions import decide_after_failure
from jobs_scheduler.domain.retry import RetryPolicy, retry_delay_ms
from jobs_scheduler.domain.transitions import sources_of

S = JobStatus
JobRow: TypeAlias = Row[*tuple[Any, ...]]


@dataclass(frozen=True)
class JobDefaults:
    max_attempts: int
    max_attempts_by_type: dict[str, int]
    timeout_seconds: int
    max_timeout_seconds: int
    timeout_grace_seconds: int
    retry_policy: RetryPolicy
    ttl_redispatch_limit: int

    def attempts_for(self, message: JobSubmitted) -> int:
        if message.max_attempts is not None:
            return message.max_attempts
        return self.max_attempts_by_type.get(message.job_type, self.max_attempts)

    def timeout_for(self, message: JobSubmitted) -> int:
        return min(message.timeout_seconds or self.timeout_seconds, self.max_timeout_seconds)


async def record_submissions(
    connection: AsyncConnection,
    changes: Changes,
    messages: Sequence[JobSubmitted],
    defaults: JobDefaults,
) -> int:
    """Insert new jobs (idempotent on job id) and dispatch their first attempt."""
    unique = {m.job_id: m for m in messages}
    rows = [
        {
            "id": m.job_id,
            "type": m.job_type,
            "priority": m.priority,
            "payload": m.payload,
            "submitted_by": m.submitted_by,
            "status": S.QUEUED.value,
            "attempt": 1,
            "max_attempts": defaults.attempts_for(m),
            "attempt_limit": defaults.attempts_for(m),
            "timeout_seconds": defaults.timeout_for(m),
            "trace_id": m.trace_id,
            "created_at": m.submitted_at,
        }
        for m in sorted(unique.values(), key=lambda m: m.job_id)
    ]
    if not rows:
        return 0
    inserted = await connection.execute(
        insert(jobs)
        .values(rows)
        .on_conflict_do_nothing(index_elements=[jobs.c.id])
        .returning(
            jobs.c.id,
            jobs.c.type,
            jobs.c.priority,
            jobs.c.payload,
            jobs.c.timeout_seconds,
            jobs.c.trace_id,
        )
    )
    count = 0
    for job in inserted:
        changes.move(job.id, 0, None, S.PENDING, "submitted")
        changes.move(job.id, 1, S.PENDING, S.QUEUED, "dispatched")
        changes.dispatch(job, attempt=1, new_attempt=True)
        count += 1
    return count


async def apply_running(
    connection: AsyncConnection, changes: Changes, message: JobRunning, defaults: JobDefaults
) -> bool:
    grace = defaults.timeout_grace_seconds
    row = (
        await connection.execute(
            update(jobs)
            .where(
                jobs.c.id == message.job_id,
                jobs.c.attempt == message.attempt,
                jobs.c.status.in_(sources_of(S.RUNNING)),
            )
            .values(
                status=S.RUNNING.value,
                worker_id=message.worker_id,
                started_at=message.started_at,
                lease_expires_at=func.now()
                + func.make_interval(0, 0, 0, 0, 0, 0, jobs.c.timeout_seconds + grace),
                updated_at=func.now(),
            )
            .returning(jobs.c.id)
        )
    ).first()
    if row is None:
        return False
    changes.move(message.job_id, message.attempt, S.QUEUED, S.RUNNING, "started")
    await connection.execute(
        update(job_attempts)
        .where(job_attempts.c.job_id == message.job_id, job_attempts.c.attempt == message.attempt)
        .values(status="running", worker_id=message.worker_id, started_at=message.started_at)
    )
    return True


_JOB_COLUMNS = (
    jobs.c.id,
    jobs.c.type,
    jobs.c.priority,
    jobs.c.payload,
    jobs.c.submitted_by,
    jobs.c.status,
    jobs.c.attempt,
    jobs.c.max_attempts,
    jobs.c.attempt_limit,
    jobs.c.timeout_seconds,
    jobs.c.expired_count,
    jobs.c.trace_id,
)


async def _lock_job(
    connection: AsyncConnection, job_id: uuid.UUID, attempt: int | None, statuses: Sequence[str]
) -> JobRow | None:
    conditions = [jobs.c.id == job_id, jobs.c.status.in_(statuses)]
    if attempt is not None:
        conditions.append(jobs.c.attempt == attempt)
    query = select(*_JOB_COLUMNS).where(and_(*conditions)).with_for_update()
    return (await connection.execute(query)).first()


async def _finish_attempt(
    connection: AsyncConnection,
    job_id: uuid.UUID,
    attempt: int,
    *,
    status: str,
    error_class: str | None = None,
    error: str | None = None,
    finished_at: Any = None,
) -> None:
    finished = finished_at if finished_at is not None else func.now()
    await connection.execute(
        update(job_attempts)
        .where(job_attempts.c.job_id == job_id, job_attempts.c.attempt == attempt)
        .values(
            status=status,
            finished_at=finished,
            error_class=error_class,
            error=error,
            duration_ms=func.floor(
                func.extract("epoch", finished - func.coalesce(job_attempts.c.started_at, finished))
                * 1000
            ),
        )
    )


async def apply_result(
    connection: AsyncConnection, changes: Changes, message: JobResult, defaults: JobDefaults
) -> bool:
    job = await _lock_job(
        connection,
        message.job_id,
        message.attempt,
        tuple(set(sources_of(S.SUCCEEDED)) & set(sources_of(S.FAILED))),
    )
    if job is None:
        return False
    current = S(job.status)
    if message.outcome == "succeeded":
        changes.move(job.id, job.attempt, current, S.SUCCEEDED, "succeeded")
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == job.id)
            .values(
                status=S.SUCCEEDED.value,
                result=message.result or {},
                worker_id=message.worker_id,
                started_at=func.coalesce(jobs.c.started_at, message.started_at),
                finished_at=message.finished_at,
                lease_expires_at=None,
                updated_at=func.now(),
            )
        )
        await _finish_attempt(
            connection, job.id, job.attempt, status="succeeded", finished_at=message.finished_at
        )
        return True
    error = message.error
    await fail_attempt(
        connection,
        changes,
        job,
        kind=error.kind if error else ErrorKind.RETRYABLE,
        error_class=error.error_class if error else "UnknownError",
        error=error.message if error else "the worker reported a failure without an error",
        defaults=defaults,
        attempt_status="timed_out" if error and error.kind == ErrorKind.TIMEOUT else "failed",
    )
    return True


async def fail_attempt(
    connection: AsyncConnection,
    changes: Changes,
    job: JobRow,
    *,
    kind: ErrorKind,
    error_class: str,
    error: str,
    defaults: JobDefaults,
    attempt_status: str,
    dead_reason: str | None = None,
) -> None:
    """An attempt ended badly: schedule the retry, or dead-letter the job."""
    current = S(job.status)
    changes.move(job.id, job.attempt, current, S.FAILED, f"{kind.value}: {error_class}")
    await _finish_attempt(
        connection,
        job.id,
        job.attempt,
        status=attempt_status,
        error_class=error_class,
        error=error,
    )
    decision = decide_after_failure(attempt=job.attempt, attempt_limit=job.attempt_limit, kind=kind)
    if decision.action == "retry":
        delay_ms = retry_delay_ms(defaults.retry_policy, job.attempt)
        changes.move(job.id, job.attempt, S.FAILED, S.SCHEDULED, f"retry in {delay_ms} ms")
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == job.id)
            .values(
                status=S.SCHEDULED.value,
                run_at=func.now() + func.make_interval(0, 0, 0, 0, 0, 0, delay_ms / 1000.0),
                last_error=error,
                last_error_class=error_class,
                lease_expires_at=None,
                updated_at=func.now(),
            )
        )
        return
    reason = dead_reason or decision.reason
    await mark_dead(
        connection,
        changes,
        job,
        current=S.FAILED,
        reason=reason,
        error=error,
        error_class=error_class,
    )


async def mark_dead(
    connection: AsyncConnection,
    changes: Changes,
    job: JobRow,
    *,
    current: JobStatus,
    reason: str,
    error: str | None,
    error_class: str | None,
) -> None:
    changes.move(job.id, job.attempt, current, S.DEAD, reason)
    await connection.execute(
        update(jobs)
        .where(jobs.c.id == job.id)
        .values(
            status=S.DEAD.value,
            last_error=error,
            last_error_class=error_class,
            finished_at=func.now(),
            lease_expires_at=None,
            run_at=None,
            updated_at=func.now(),
        )
    )
    changes.dead_letter(
        job, attempt=job.attempt, reason=reason, error=error, error_class=error_class
    )


async def claim_inbox(connection: AsyncConnection, message_id: uuid.UUID, queue: str) -> bool:
    """Record a command's message id; False when it was applied before."""
    inserted = await connection.execute(
        insert(inbox)
        .values(message_id=message_id, queue=queue)
        .on_conflict_do_nothing()
        .returning(inbox.c.message_id)
    )
    return inserted.first() is not None


async def apply_retry_request(
    connection: AsyncConnection, changes: Changes, message: RetryRequested
) -> bool:
    """Run a dead job again with a fresh attempt budget."""
    if not await claim_inbox(connection, message.message_id, "jobs.retry"):
        return False
    job = await _lock_job(connection, message.job_id, None, (S.DEAD.value,))
    if job is None:
        return False
    attempt = job.attempt + 1
    changes.move(job.id, attempt, S.DEAD, S.QUEUED, f"manual retry by {message.requested_by}")
    await connection.execute(
        update(jobs)
        .where(jobs.c.id == job.id)
        .values(
            status=S.QUEUED.value,
            attempt=attempt,
            attempt_limit=job.attempt + job.max_attempts,
            expired_count=0,
            finished_at=None,
            run_at=None,
            updated_at=func.now(),
        )
    )
    await connection.execute(
        update(dead_letters)
        .where(dead_letters.c.job_id == job.id, dead_letters.c.resolved_at.is_(None))
        .values(resolved_at=func.now(), resolution=f"retried by {message.requested_by}")
    )
    changes.dispatch(job, attempt=attempt, new_attempt=True)
    return True


async def apply_dead_lettered(
    connection: AsyncConnection,
    changes: Changes,
    message: JobDispatch,
    *,
    death_reason: str,
    defaults: JobDefaults,
) -> str:
    """A ready message came back through jobs.dlx (expired or rejected) before it ran."""
    job = await _lock_job(connection, message.job_id, message.attempt, (S.QUEUED.value,))
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
    await _finish_attempt(connection, job.id, job.attempt, status="expired")
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


async def promote_due(connection: AsyncConnection, changes: Changes, limit: int) -> int:
    """Dispatch scheduled jobs whose time has come (retry backoffs, delayed jobs)."""
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
            status=S.QUEUED.value,
            attempt=jobs.c.attempt + 1,
            run_at=None,
            updated_at=func.now(),
        )
        .returning(
            jobs.c.id,
            jobs.c.type,
            jobs.c.priority,
            jobs.c.payload,
            jobs.c.timeout_seconds,
            jobs.c.trace_id,
            jobs.c.attempt,
        )
    )
    count = 0
    for job in sorted(promoted, key=lambda j: j.id):
        changes.move(job.id, job.attempt, S.SCHEDULED, S.QUEUED, "due")
        changes.dispatch(job, attempt=job.attempt, new_attempt=True)
        count += 1
    return count


async def reap_expired(
    connection: AsyncConnection, changes: Changes, limit: int, defaults: JobDefaults
) -> int:
    """Running attempts past their lease (timeout plus grace): retry or dead-letter them."""
    expired = (
        await connection.execute(
            select(*_JOB_COLUMNS)
            .where(jobs.c.status == S.RUNNING.value, jobs.c.lease_expires_at < func.now())
            .order_by(jobs.c.lease_expires_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    ).all()
    for job in sorted(expired, key=lambda j: j.id):
        await fail_attempt(
            connection,
            changes,
            job,
            kind=ErrorKind.TIMEOUT,
            error_class="AttemptTimedOut",
            error=f"no result within the job's timeout of {job.timeout_seconds} s",
            defaults=defaults,
            attempt_status="timed_out",
        )
    return len(expired)


async def record_poison(
    connection: AsyncConnection,
    *,
    queue: str,
    message_id: str | None,
    reason: str,
    body: bytes,
    headers: dict[str, Any],
) -> None:
    await connection.execute(
        insert(poison_messages).values(
            queue=queue, message_id=message_id, reason=reason[:2000], body=body, headers=headers
        )
    )
