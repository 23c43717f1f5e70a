"""Ending a job badly: an attempt that failed (retried or dead by the failure policy,
``domain/failures.py``), dead-lettering a job, cancelling one. Every status change goes
through the status writer (``status.py``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ErrorKind, JobResult, JobStatus
from jobs_scheduler.adapters import attempts, job_writes
from jobs_scheduler.adapters.jobs import JobRow
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.failures import after_failure
from jobs_scheduler.domain.retry import retry_delay_ms

S = JobStatus
Via = tuple[tuple[JobStatus, str], ...]


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
    lease_lost: bool = False,
    retry_after_seconds: float | None = None,
    report: JobResult | None = None,
) -> None:
    """An attempt of the locked ``job`` ended badly: its row is finished, and the job moves
    through ``failed`` to what the failure policy decides (a retry, dead, or cancelled). A
    retry waits ``retry_after_seconds`` when the handler asked for it (``RetryLater``), else
    what the job's retry policy says."""
    current = S(job.status)
    failed: Via = ((S.FAILED, f"{kind.value}: {error_class}"),)
    await attempts.finish(
        connection,
        job.id,
        job.attempt,
        status=attempt_status,
        error_class=error_class,
        error=error,
        finished_at=report.finished_at if report else None,
        worker_id=report.worker_id if report else None,
        started_at=report.started_at if report else None,
    )
    decision = after_failure(
        kind=kind,
        attempt=job.attempt,
        attempt_limit=job.attempt_limit,
        error_class=error_class,
        cancel_requested=job.cancel_requested_at is not None,
        lease_lost=lease_lost,
    )
    if decision.action == "cancelled":
        await mark_cancelled(
            connection, changes, job, current=current, reason="cancelled", via=failed
        )
    elif decision.action == "retry":
        delay_ms = (
            round(retry_after_seconds * 1000)
            if retry_after_seconds is not None
            else retry_delay_ms(defaults.policy_for(job.retry_policy), job.attempt)
        )
        retry = Transition(
            job.id,
            current,
            S.SCHEDULED,
            f"retry in {delay_ms} ms",
            attempt=job.attempt,
            values={
                "delay_seconds": delay_ms / 1000.0,
                "last_error": error,
                "last_error_class": error_class,
            },
            via=failed,
        )
        await apply_transitions(connection, changes, [retry], job_writes.RETRY_LATER)
    else:
        await mark_dead(
            connection,
            changes,
            job,
            current=current,
            reason=decision.reason,
            error=error,
            error_class=error_class,
            via=failed,
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
    via: Via = (),
) -> bool:
    """``current -> dead`` (through ``via``) and its dead-letter row. False if stale."""
    dead = Transition(
        job.id,
        current,
        S.DEAD,
        reason,
        attempt=job.attempt,
        values={"last_error": error, "last_error_class": error_class},
        via=via,
    )
    if not await apply_transitions(connection, changes, [dead], job_writes.DEAD):
        return False
    changes.dead_letter(
        job, attempt=job.attempt, reason=reason, error=error, error_class=error_class
    )
    return True


async def mark_cancelled(
    connection: AsyncConnection,
    changes: Changes,
    job: JobRow,
    *,
    current: JobStatus,
    reason: str,
    via: Via = (),
) -> bool:
    """``current -> cancelled`` (through ``via``). False if stale."""
    cancelled = Transition(job.id, current, S.CANCELLED, reason, attempt=job.attempt, via=via)
    return bool(await apply_transitions(connection, changes, [cancelled], job_writes.CANCELLED))
