"""The one error root and the JSON error envelope every HTTP API answers with."""

from __future__ import annotations

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


class Conflict(PlatformError):
    code = "conflict"
    status_code = 409


class TooManyRequests(PlatformError):
    code = "too_many_requests"
    status_code = 429


class UpstreamUnavailable(PlatformError):
    code = "service_unavailable"
    status_code = 503


class PoisonMessage(PlatformError):
    """A message that can never be processed (unparseable, unknown version): dead path."""
