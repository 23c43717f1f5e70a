"""Shared job-row operations: locking, finishing attempts, failing, dead-lettering, cancelling.

Every update is fenced on ``(id, attempt)`` where an attempt is involved and every status
change is recorded through :meth:`Changes.move`, which checks the transition table.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from sqlalchemy import and_, func, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ErrorKind, JobStatus
from jobs_common.jobstore import job_attempts, jobs
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.domain.decisions import decide_after_failure
from jobs_scheduler.domain.retry import RetryPolicy, retry_delay_ms

S = JobStatus
JobRow: TypeAlias = Row[*tuple[Any, ...]]

# Worker-reported error classes that mean the message itself can never be processed.
UNPROCESSABLE_ERRORS = frozenset({"InvalidPayload", "UnknownJobType"})


@dataclass(frozen=True)
class JobDefaults:
    max_attempts: int
    timeout_seconds: int
    max_timeout_seconds: int
    timeout_grace_seconds: int
    retry_policy: RetryPolicy
    ttl_redispatch_limit: int
    lease_seconds: int = 10
    poison_threshold: int = 3
    max_attempts_by_type: dict[str, int] = field(default_factory=dict)
    retry_policy_by_type: dict[str, dict[str, Any]] = field(default_factory=dict)

    def policy_for(self, row_policy: dict[str, Any] | None) -> RetryPolicy:
        if not row_policy:
            return self.retry_policy
        return RetryPolicy(**row_policy)


# What a dispatch needs of a job row.
DISPATCH_COLUMNS = (
    jobs.c.id,
    jobs.c.type,
    jobs.c.priority,
    jobs.c.payload,
    jobs.c.timeout_seconds,
    jobs.c.trace_id,
    jobs.c.attempt,
)

JOB_COLUMNS = (
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
    jobs.c.lost_count,
    jobs.c.retry_policy,
    jobs.c.worker_id,
    jobs.c.run_at,
    jobs.c.cancel_requested_at,
    jobs.c.cancel_requested_by,
    jobs.c.trace_id,
)


async def lock_job(
    connection: AsyncConnection,
    job_id: uuid.UUID,
    attempt: int | None,
    statuses: Sequence[str],
) -> JobRow | None:
    conditions = [jobs.c.id == job_id, jobs.c.status.in_(statuses)]
    if attempt is not None:
        conditions.append(jobs.c.attempt == attempt)
    query = select(*JOB_COLUMNS).where(and_(*conditions)).with_for_update()
    return (await connection.execute(query)).first()


async def finish_attempt(
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
    exhausted_reason: str = "max_attempts",
) -> None:
    """An attempt ended badly: schedule the retry, or dead-letter the job."""
    current = S(job.status)
    changes.move(job.id, job.attempt, current, S.FAILED, f"{kind.value}: {error_class}")
    await finish_attempt(
        connection,
        job.id,
        job.attempt,
        status=attempt_status,
        error_class=error_class,
        error=error,
    )
    if job.cancel_requested_at is not None:
        await mark_cancelled(connection, changes, job, current=S.FAILED, reason="cancelled")
        return
    decision = decide_after_failure(attempt=job.attempt, attempt_limit=job.attempt_limit, kind=kind)
    if decision.action == "retry":
        delay_ms = retry_delay_ms(defaults.policy_for(job.retry_policy), job.attempt)
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
                deadline_at=None,
                updated_at=func.now(),
            )
        )
        return
    if decision.reason == "permanent_error" and error_class in UNPROCESSABLE_ERRORS:
        reason = "unprocessable"
    elif decision.reason == "max_attempts":
        reason = exhausted_reason
    else:
        reason = decision.reason
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
            deadline_at=None,
            run_at=None,
            updated_at=func.now(),
        )
    )
    changes.dead_letter(
        job, attempt=job.attempt, reason=reason, error=error, error_class=error_class
    )


async def mark_cancelled(
    connection: AsyncConnection,
    changes: Changes,
    job: JobRow,
    *,
    current: JobStatus,
    reason: str,
) -> None:
    changes.move(job.id, job.attempt, current, S.CANCELLED, reason)
    await connection.execute(
        update(jobs)
        .where(jobs.c.id == job.id)
        .values(
            status=S.CANCELLED.value,
            finished_at=func.now(),
            lease_expires_at=None,
            deadline_at=None,
            run_at=None,
            updated_at=func.now(),
        )
    )
