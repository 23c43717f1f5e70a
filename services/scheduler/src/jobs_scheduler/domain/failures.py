"""The failure policy: what happens to a job when an attempt ends without success."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from jobs_common.contracts import ErrorKind

# Worker-reported error classes that mean the message itself can never be processed.
UNPROCESSABLE_ERRORS: Final = frozenset({"InvalidPayload", "UnknownJobType"})

FailureAction = Literal["retry", "dead", "cancelled"]


@dataclass(frozen=True)
class FailureDecision:
    action: FailureAction
    # Why: the dead letter's reason when dead ("permanent_error", "unprocessable",
    # "max_attempts", "lease_expired"), else "retry_scheduled" or "cancelled".
    reason: str


def after_failure(
    *,
    kind: ErrorKind,
    attempt: int,
    attempt_limit: int,
    error_class: str,
    cancel_requested: bool,
    lease_lost: bool = False,
) -> FailureDecision:
    """A job whose cancellation was asked ends cancelled; a permanent error is never retried
    (``unprocessable`` when the worker could not even read the job); otherwise the job is
    retried while ``attempt < attempt_limit``, else dead (``lease_expired`` when the last
    attempt was lost with its lease, ``max_attempts`` when it failed)."""
    if cancel_requested:
        return FailureDecision("cancelled", "cancelled")
    if kind == ErrorKind.PERMANENT:
        if error_class in UNPROCESSABLE_ERRORS:
            return FailureDecision("dead", "unprocessable")
        return FailureDecision("dead", "permanent_error")
    if attempt >= attempt_limit:
        return FailureDecision("dead", "lease_expired" if lease_lost else "max_attempts")
    return FailureDecision("retry", "retry_scheduled")


@dataclass(frozen=True)
class StoppedAttempt:
    kind: ErrorKind
    error_class: str
    error: str


def stopped_attempt(reason: str | None) -> StoppedAttempt:
    """A ``cancelled`` outcome of a job whose cancellation no one asked: the platform stopped
    the attempt (its lease judged lost, its worker told to let it go). Only a person's cancel
    request ends a job ``cancelled``, and the handler did not fail: the attempt counts as
    lost, retryable within the job's attempts, never a permanent error."""
    return StoppedAttempt(
        ErrorKind.RETRYABLE,
        "AttemptStopped",
        f"the platform stopped the attempt ({reason or 'no reason given'})",
    )
