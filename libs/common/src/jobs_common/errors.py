"""The one error root and the JSON error envelope every HTTP API answers with."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel


class ErrorDetail(BaseModel):
    field: str
    message: str


class ErrorEnvelope(BaseModel):
    error: str
    message: str
    details: list[ErrorDetail] = []


class PlatformError(Exception):
    """Root of every error the platform raises on purpose."""

    code = "internal_error"
    status_code = 500

    def __init__(self, message: str, *, details: list[ErrorDetail] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []

    def envelope(self) -> dict[str, Any]:
        return ErrorEnvelope(
            error=self.code, message=self.message, details=self.details
        ).model_dump()

    def headers(self) -> dict[str, str]:
        """HTTP headers the answer carries besides the envelope (none by default)."""
        return {}


class BadRequest(PlatformError):
    code = "bad_request"
    status_code = 400


class ValidationFailed(PlatformError):
    code = "validation_error"
    status_code = 422


class Unauthorized(PlatformError):
    code = "unauthorized"
    status_code = 401


class Forbidden(PlatformError):
    code = "forbidden"
    status_code = 403


class NotFound(PlatformError):
    code = "not_found"
    status_code = 404


class MethodNotAllowed(PlatformError):
    code = "method_not_allowed"
    status_code = 405

    def __init__(self, message: str, *, allow: Iterable[str]) -> None:
        super().__init__(message)
        self.allow = tuple(sorted(set(allow)))

    def headers(self) -> dict[str, str]:
        return {"Allow": ", ".join(self.allow)}


class PayloadTooLarge(PlatformError):
    """A request body above its route's limit (``jobs_common.body_limit``)."""

    code = "payload_too_large"
    status_code = 413


class Conflict(PlatformError):
    code = "conflict"
    status_code = 409


class TooManyRequests(PlatformError):
    """A limit was reached; ``retry_after`` (whole seconds, at least 1) says when to come back
    and is answered as the ``Retry-After`` header."""

    code = "too_many_requests"
    status_code = 429

    def __init__(
        self,
        message: str,
        *,
        retry_after: int | None = None,
        details: list[ErrorDetail] | None = None,
    ) -> None:
        super().__init__(message, details=details)
        self.retry_after = None if retry_after is None else max(1, retry_after)

    def headers(self) -> dict[str, str]:
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}


class UpstreamUnavailable(PlatformError):
    code = "service_unavailable"
    status_code = 503


class PoisonMessage(PlatformError):
    """A message that can never be processed (unparseable, unknown version): dead path."""


# The errors an owning service's answer carries back to the caller's caller unchanged.
PASSED_ON: dict[int, type[PlatformError]] = {
    error.status_code: error
    for error in (BadRequest, ValidationFailed, NotFound, Conflict, TooManyRequests)
}


def error_from_answer(status_code: int, body: Any, *, owner: str) -> PlatformError:
    """The error a service answered (``owner`` names it), to raise again: a refusal that is
    the caller's (400, 404, 409, 422, 429) with its message and details; anything else (a
    401 of a misconfigured token, a 5xx, a body that is not an envelope) as 503."""
    error = PASSED_ON.get(status_code)
    try:
        envelope = ErrorEnvelope.model_validate(body)
    except ValueError:
        envelope = None
    if error is None or envelope is None:
        return UpstreamUnavailable(f"the {owner} answered {status_code}; retry")
    return error(envelope.message, details=envelope.details)
