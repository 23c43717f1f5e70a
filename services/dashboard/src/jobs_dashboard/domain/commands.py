"""Rules for operator commands."""

from __future__ import annotations

from jobs_common.contracts import JobStatus
from jobs_common.errors import Conflict, ErrorDetail


def ensure_retryable(status: str) -> None:
    """Only a dead job can be retried; anything else is a conflict with its current state."""
    if status != JobStatus.DEAD.value:
        raise Conflict(
            f"job is {status}; only dead jobs can be retried",
            details=[ErrorDetail(field="status", message=f"current status is {status}")],
        )
