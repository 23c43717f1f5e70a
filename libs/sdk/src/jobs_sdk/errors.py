"""The failures a handler raises on purpose, and what of an exception its owner may read.

A job's error and log lines are shown to whoever submitted it: they carry the exception's
class and message, never a traceback, and absolute filesystem paths in the message are cut
to their last component (``/srv/app/var/artifacts/j/1.png`` -> ``…/1.png``). The traceback
stays in the worker's own log (stderr, JSON in production)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

MAX_ERROR_MESSAGE = 2000

ErrorKind = Literal["retryable", "permanent", "timeout"]
"""How the platform treats a failed attempt: retry it (within the job's attempts), end the
job dead at once, or count it as a timeout (retried like ``retryable``)."""


@dataclass(frozen=True)
class AttemptError:
    """Why an attempt failed, as the job's owner reads it (the worker reports it as is)."""

    kind: ErrorKind
    error_class: str
    message: str
    retry_after_seconds: float | None = None


class JobFailure(Exception):
    """Root of the failures a handler raises on purpose."""

    kind: ErrorKind = "retryable"

    def __init__(self, message: str, *, error_class: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error_class = error_class or type(self).__name__


class RetryableJobError(JobFailure):
    """A transient failure: another attempt may succeed (outage, refused connection...)."""

    kind = "retryable"


class PermanentJobError(JobFailure):
    """The job can never succeed as submitted (bad input, recipient refused...)."""

    kind = "permanent"


class RetryLater(RetryableJobError):
    """Try again after ``delay_seconds`` (in place of the job's retry policy), within the
    job's attempts: a rate limit, a resource not ready yet."""

    def __init__(
        self, delay_seconds: float, message: str = "", *, error_class: str | None = None
    ) -> None:
        if not 0 <= delay_seconds <= 86_400:
            raise ValueError(f"delay_seconds is 0 to 86400, not {delay_seconds}")
        super().__init__(message or f"retry in {delay_seconds:g} s", error_class=error_class)
        self.delay_seconds = float(delay_seconds)


class FailPermanently(PermanentJobError):
    """The job can never succeed: dead at once, no further attempts."""


class JobTimedOut(JobFailure):
    """The attempt ran past its ``timeout_seconds``."""

    kind = "timeout"


# An absolute path: POSIX (``/a/b``, two components at least, not inside a URL or a word
# such as ``and/or``) or Windows (``C:\\a\\b``). The last component is kept.
_POSIX_PATH = re.compile(r"(?<![\w.:/~-])(?:/[\w.@+~-]+){2,}/?")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\(?:[^\\\s'\"<>|:*?]+\\)*[^\\\s'\"<>|:*?]*")


def _last_component(match: re.Match[str]) -> str:
    path = match.group(0).rstrip("/\\")
    name = re.split(r"[/\\]", path)[-1]
    return f"…/{name}" if name else "…"


def strip_paths(text: str) -> str:
    """``text`` with every absolute filesystem path cut to ``…/<last component>``."""
    return _WINDOWS_PATH.sub(_last_component, _POSIX_PATH.sub(_last_component, text))


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_ERROR_MESSAGE else text[: MAX_ERROR_MESSAGE - 1] + "…"


def public_message(text: str) -> str:
    """An error message as the job's owner may read it: no server paths, bounded length."""
    return _truncate(strip_paths(text))


def describe(exc: BaseException) -> str:
    """``ExceptionClass: message`` (paths stripped): how a log line shipped to the job's owner
    names an exception, in place of the traceback."""
    error_class = exc.error_class if isinstance(exc, JobFailure) else type(exc).__name__
    message = strip_paths(str(exc))
    return f"{error_class}: {message}" if message else error_class


def classify(exc: BaseException) -> AttemptError:
    """The error of a failed attempt: typed failures keep their kind, anything else is
    retryable (an unexpected bug or outage should not kill a job on its first attempt). The
    message is the exception's own (paths stripped), never a traceback."""
    if isinstance(exc, JobFailure):
        return AttemptError(
            kind=exc.kind,
            error_class=exc.error_class,
            message=public_message(exc.message),
            retry_after_seconds=exc.delay_seconds if isinstance(exc, RetryLater) else None,
        )
    message = str(exc) or type(exc).__name__
    return AttemptError(
        kind="retryable", error_class=type(exc).__name__, message=public_message(message)
    )
