"""The lease reaper: running attempts whose worker went silent or that ran past their
timeout, judged against the read horizon (see ``domain/leases.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ErrorKind, JobStatus
from jobs_scheduler.adapters import attempts, jobs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.failures import fail_attempt, mark_dead
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.leases import after_lease_lost, verdict, worker_went_silent

S = JobStatus


async def reap_expired(
    connection: AsyncConnection,
    changes: Changes,
    limit: int,
    defaults: JobDefaults,
    horizon: datetime,
) -> tuple[int, int]:
    """Running attempts whose worker went silent (lease) or that ran past their timeout
    (deadline), judged against ``horizon`` (how far every live replica has read the
    heartbeat and result queues), never the wall clock: retry, cancel or dead-letter them.
    Returns (lease expiries, timeouts)."""
    expired = await jobs.lock_running_past(connection, limit, horizon)
    leases = timeouts = 0
    lease = timedelta(seconds=defaults.lease_seconds)
    for job in expired:
        judged = verdict(
            lease_expires_at=job.lease_expires_at, deadline_at=job.deadline_at, horizon=horizon
        )
        if judged == "timeout":
            timeouts += 1
            changes.cancel_attempt(job.id, job.attempt, "timeout", worker_id=job.worker_id)
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
            continue
        leases += 1
        silent = worker_went_silent(
            last_heartbeat_at=job.last_heartbeat_at, horizon=horizon, lease=lease
        )
        if not silent:
            # The worker lives but stopped listing the attempt: stop it there, retry it.
            changes.cancel_attempt(job.id, job.attempt, "lease lost", worker_id=job.worker_id)
        await _lease_lost(connection, changes, job, defaults, silent=silent)
    return leases, timeouts


async def _lease_lost(
    connection: AsyncConnection, changes: Changes, job: Any, defaults: JobDefaults, *, silent: bool
) -> None:
    """Only an attempt whose worker went silent counts toward the poison threshold
    (``domain/leases.py``); a job below it goes through the failure policy."""
    loss = after_lease_lost(
        lost_count=job.lost_count,
        silent=silent,
        threshold=defaults.poison_threshold,
        cancel_requested=job.cancel_requested_at is not None,
    )
    if loss.lost_count != job.lost_count:
        await jobs.set_lost_count(connection, job.id, loss.lost_count)
    message = (
        f"worker {job.worker_id} went silent"
        if silent
        else f"worker {job.worker_id} stopped renewing the lease"
    )
    if loss.poison:
        await attempts.finish(
            connection,
            job.id,
            job.attempt,
            status="lost",
            error_class="LeaseExpired",
            error=message,
        )
        await mark_dead(
            connection,
            changes,
            job,
            current=S.RUNNING,
            reason="poison",
            error=f"{loss.lost_count} attempts ended without a result (the worker died each time)",
            error_class="PoisonJob",
            via=((S.FAILED, "lease expired"),),
        )
        return
    await fail_attempt(
        connection,
        changes,
        job,
        kind=ErrorKind.RETRYABLE,
        error_class="LeaseExpired",
        error=message,
        defaults=defaults,
        attempt_status="lost",
        lease_lost=True,
    )
