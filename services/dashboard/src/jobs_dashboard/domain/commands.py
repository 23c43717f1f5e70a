"""Rules for operator commands."""

from __future__ import annotations

from jobs_common.contracts import TERMINAL_STATUSES, JobStatus
from jobs_common.errors import Conflict, ErrorDetail


def ensure_retryable(status: str) -> None:
    """Only a dead job can be retried; anything else is a conflict with its current state."""
    if status != JobStatus.DEAD.value:
        raise Conflict(
            f"job is {status}; only dead jobs can be retried",
            details=[ErrorDetail(field="status", message=f"current status is {status}")],
        )


def ensure_cancellable(status: str) -> None:
    """A job can be cancelled until it is terminal (succeeded, dead or cancelled)."""
    if status in {s.value for s in TERMINAL_STATUSES}:
        raise Conflict(
            f"job is {status}; a finished job cannot be cancelled",
            details=[ErrorDetail(field="status", message=f"current status is {status}")],
        )
