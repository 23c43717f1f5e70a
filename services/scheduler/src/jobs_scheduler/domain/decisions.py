"""What happens to a job when an attempt ends without success."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from jobs_common.contracts import ErrorKind


@dataclass(frozen=True)
class FailureDecision:
    action: Literal["retry", "dead"]
    reason: str


def decide_after_failure(*, attempt: int, attempt_limit: int, kind: ErrorKind) -> FailureDecision:
    """Retry while attempts remain and the error may go away; else dead-letter."""
    if kind == ErrorKind.PERMANENT:
        return FailureDecision("dead", "permanent_error")
    if attempt >= attempt_limit:
        return FailureDecision("dead", "max_attempts")
    return FailureDecision("retry", "retry_scheduled")
