"""Dead letters (pure): when a letter may be requeued or discarded, and a bulk requeue's pace."""

from __future__ import annotations

from datetime import datetime, timedelta

from jobs_common.contracts import JobStatus
from jobs_common.errors import Conflict, ErrorDetail


def ensure_open(resolved_at: datetime | None, resolution: str | None) -> None:
    """A resolved letter (requeued or discarded) is resolved for good: 409."""
    if resolved_at is not None:
        raise Conflict(
            f"dead letter is already resolved ({resolution})",
            details=[ErrorDetail(field="resolution", message=f"resolved as {resolution}")],
        )


def ensure_requeueable(resolved_at: datetime | None, resolution: str | None, status: str) -> None:
    """Only an open dead letter of a job that is still dead can be requeued."""
    ensure_open(resolved_at, resolution)
    if status != JobStatus.DEAD.value:
        raise Conflict(
            f"job is {status}; only a dead job can be requeued",
            details=[ErrorDetail(field="status", message=f"current status is {status}")],
        )


def is_requeueable(resolved_at: datetime | None, status: str) -> bool:
    return resolved_at is None and status == JobStatus.DEAD.value


def requeue_not_before(now: datetime, index: int, rate_per_second: float) -> datetime:
    """When the ``index``-th (0-based) requeue of a bulk replay may run: ``rate`` per second."""
    if index < 0:
        raise ValueError("index is 0-based")
    if rate_per_second <= 0:
        raise ValueError("rate_per_second must be positive")
    return now + timedelta(seconds=index / rate_per_second)
