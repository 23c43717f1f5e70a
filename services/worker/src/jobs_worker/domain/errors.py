"""Typed job failures and the one function that turns any exception into a JobError."""

from __future__ import annotations

from jobs_common.contracts import ErrorKind, JobError
from jobs_common.errors import PlatformError

MAX_ERROR_MESSAGE = 2000


class JobFailure(PlatformError):
    """Root of the failures a handler raises on purpose."""

    kind: ErrorKind = ErrorKind.RETRYABLE

    def __init__(self, message: str, *, error_class: str | None = None) -> None:
        super().__init__(message)
        self.error_class = error_class or type(self).__name__


class RetryableJobError(JobFailure):
    """A transient failure: another attempt may succeed (outage, refused connection...)."""

    kind = ErrorKind.RETRYABLE


class PermanentJobError(JobFailure):
    """The job can never succeed as submitted (bad input, recipient refused...)."""

    kind = ErrorKind.PERMANENT


class JobTimedOut(JobFailure):
    """The attempt ran past its ``timeout_seconds``."""

    kind = ErrorKind.TIMEOUT


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_ERROR_MESSAGE else text[: MAX_ERROR_MESSAGE - 1] + "…"


def classify(exc: BaseException) -> JobError:
    """The JobError of a failed attempt: typed failures keep their kind, anything else is
    retryable (an unexpected bug or outage should not kill a job on its first attempt)."""
    if isinstance(exc, JobFailure):
        return JobError(kind=exc.kind, error_class=exc.error_class, message=_truncate(exc.message))
    message = str(exc) or type(exc).__name__
    return JobError(
        kind=ErrorKind.RETRYABLE, error_class=type(exc).__name__, message=_truncate(message)
    )
