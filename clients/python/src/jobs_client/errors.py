"""The client's one error family: every failure is a :class:`JobsError`.

An answer of the API becomes the subclass of its status, carrying the platform's error envelope
``{error, message, details: [{field, message}]}`` as it came (``code``, ``message``,
``details``), the HTTP status and the gateway's ``X-Request-Id`` (quote it when reporting a
problem). A failure without an answer (refused connection, connection cut before the answer,
timeouts) is a :class:`TransportFailure` once the retries are used up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from jobs_client.models import Job


@dataclass(frozen=True)
class FieldError:
    """One entry of the envelope's ``details``: ``field`` is a dotted path such as
    ``payload.to`` or ``jobs.3.payload.minSeconds`` (batches), ``message`` says what is wrong."""

    field: str
    message: str


class JobsError(Exception):
    """The root of every error this package raises."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        details: Sequence[FieldError] = (),
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: tuple[FieldError, ...] = tuple(details)
        self.request_id = request_id
        self.body = body

    @property
    def envelope(self) -> dict[str, Any]:
        """The API's error envelope, as the server sent it (rebuilt when it sent none)."""
        return {
            "error": self.code,
            "message": self.message,
            "details": [{"field": d.field, "message": d.message} for d in self.details],
        }

    def __str__(self) -> str:
        head = f"{self.status} {self.code}: {self.message}" if self.status else self.message
        fields = "; ".join(f"{d.field}: {d.message}" for d in self.details)
        return f"{head} ({fields})" if fields else head


class ValidationError(JobsError):
    """400, 413 or 422: the request was refused as it is; ``details`` names each field."""

    @property
    def fields(self) -> dict[str, list[str]]:
        """The field errors by path: ``{"payload.to": ["value is not a valid email ..."]}``."""
        grouped: dict[str, list[str]] = {}
        for detail in self.details:
            grouped.setdefault(detail.field, []).append(detail.message)
        return grouped


class AuthError(JobsError):
    """401: no valid session (a bad login, a refused or expired token that could not be
    renewed); also raised before any request when the client has no credentials at all."""


class Forbidden(AuthError):
    """403: authenticated, but not allowed (a user naming another owner, an admin-only call)."""


class NotFound(JobsError):
    """404: unknown, or not yours (the API answers both alike)."""


class Conflict(JobsError):
    """409: the state forbids it (retry of a job that is not dead, cancel of a finished job,
    a schedule name already used, an Idempotency-Key reused with another body)."""


class RateLimited(JobsError):
    """429: too many requests. ``retry_after`` is the server's ``Retry-After`` in seconds, or
    None when waiting would not help (a cap on schedules frees no slot with time)."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(JobsError):
    """5xx: the platform failed (503: a backend is unavailable right now)."""


class TransportFailure(JobsError):
    """No answer: the connection was refused, cut before the answer or timed out, and the
    retries were used up (or the request could not safely be sent again).
    ``maybe_processed`` is True when the request had been sent: it may have taken effect."""

    def __init__(self, message: str, *, maybe_processed: bool) -> None:
        super().__init__(message, code="transport_failure")
        self.maybe_processed = maybe_processed


class WaitTimeout(JobsError, TimeoutError):
    """``wait`` ran out of time; ``pending`` maps each unfinished job id to its last status
    seen (None when it was not recorded yet)."""

    def __init__(self, message: str, *, pending: Mapping[str, str | None]) -> None:
        super().__init__(message, code="wait_timeout")
        self.pending = dict(pending)


class JobFailed(JobsError):
    """A handle's ``result()``: the job ended ``dead`` (its attempts used up, failed
    permanently, or a parent of its batch failed). ``error`` and ``error_kind`` are its last
    error and that error's class, ``attempts`` how many attempts it had, ``reason`` why it
    ended (``max_attempts``, ``permanent_error``, ``dependency_failed``...; None when not
    said), ``job`` the job as read."""

    def __init__(
        self,
        message: str,
        *,
        job_id: str,
        error: str | None,
        error_kind: str | None,
        attempts: int,
        reason: str | None,
        job: Job | None = None,
    ) -> None:
        super().__init__(message, code="job_failed")
        self.job_id = job_id
        self.error = error
        self.error_kind = error_kind
        self.attempts = attempts
        self.reason = reason
        self.job = job


class JobCancelled(JobsError):
    """A handle's ``result()``: the job was cancelled. ``reason`` as its timeline says,
    ``cancelled_by`` who asked (None when not said), ``job`` the job as read."""

    def __init__(
        self,
        message: str,
        *,
        job_id: str,
        reason: str | None,
        cancelled_by: str | None,
        job: Job | None = None,
    ) -> None:
        super().__init__(message, code="job_cancelled")
        self.job_id = job_id
        self.reason = reason
        self.cancelled_by = cancelled_by
        self.job = job


class ResultInvalid(JobsError):
    """A handle's ``result()``: the job succeeded, but its result does not fit the task's
    result model (the handler and the client disagree on it). ``result`` is the raw value."""

    def __init__(self, message: str, *, job_id: str, result: Any) -> None:
        super().__init__(message, code="result_invalid")
        self.job_id = job_id
        self.result = result


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """``Retry-After`` in seconds (the API sends whole seconds), None when absent or not a
    number (an HTTP date is not used by this API)."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(0.0, seconds)


def _envelope(response: httpx.Response) -> tuple[str | None, str, list[FieldError], Any]:
    try:
        body: Any = response.json()
    except ValueError:
        text = response.text.strip()
        return None, text[:500] or response.reason_phrase, [], text
    if not isinstance(body, Mapping):
        return None, response.reason_phrase, [], body
    code = body.get("error")
    message = body.get("message")
    details: list[FieldError] = []
    raw_details = body.get("details")
    if isinstance(raw_details, list):
        for item in raw_details:
            if isinstance(item, Mapping):
                details.append(FieldError(str(item.get("field", "")), str(item.get("message", ""))))
    return (
        str(code) if code is not None else None,
        str(message) if message is not None else response.reason_phrase,
        details,
        body,
    )


def error_from_response(response: httpx.Response) -> JobsError:
    """The exception for an error answer of the API."""
    status = response.status_code
    code, message, details, body = _envelope(response)
    common: dict[str, Any] = {
        "status": status,
        "code": code,
        "details": details,
        "request_id": response.headers.get("x-request-id"),
        "body": body,
    }
    if status in (400, 413, 422):
        return ValidationError(message, **common)
    if status == 401:
        return AuthError(message, **common)
    if status == 403:
        return Forbidden(message, **common)
    if status == 404:
        return NotFound(message, **common)
    if status == 409:
        return Conflict(message, **common)
    if status == 429:
        return RateLimited(message, retry_after=retry_after_seconds(response.headers), **common)
    if status >= 500:
        return ServerError(message, **common)
    return JobsError(message, **common)
