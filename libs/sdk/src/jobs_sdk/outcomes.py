"""What an attempt of a handler comes to (pure): succeeded with a checked result, failed with
a classified error, or cancelled. The worker and the in-process test runner
(``jobs_sdk.testing``) decide alike."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from jobs_sdk.context import HandlerSpec
from jobs_sdk.errors import AttemptError, ErrorKind, public_message

OutcomeName = Literal["succeeded", "failed", "cancelled"]
Outcome = tuple[OutcomeName, dict[str, Any] | None, AttemptError | None]


def failure(kind: ErrorKind, error_class: str, message: str) -> Outcome:
    return (
        "failed",
        None,
        AttemptError(kind=kind, error_class=error_class, message=public_message(message)),
    )


def cancelled(reason: str) -> Outcome:
    return (
        "cancelled",
        None,
        AttemptError(kind="permanent", error_class="Cancelled", message=reason[:2000]),
    )


def timed_out(timeout_seconds: float) -> Outcome:
    return failure("timeout", "JobTimeout", f"attempt exceeded its timeout of {timeout_seconds}s")


def invalid_payload(exc: ValidationError) -> Outcome:
    return failure("permanent", "InvalidPayload", str(exc))


def own_cancelled_error() -> Outcome:
    """The handler raised ``asyncio.CancelledError`` though nobody asked it to stop."""
    return failure(
        "retryable",
        "CancelledError",
        "the handler raised asyncio.CancelledError without a cancel being asked",
    )


def as_result(spec: HandlerSpec, value: Any) -> Any:
    """The handler's return value as the JSON object a result is: validated against its
    ``result`` model when it has one (a dict or that model), a model dumped as JSON."""
    if spec.result_model is not None and not isinstance(value, spec.result_model):
        value = spec.result_model.model_validate(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def succeeded(spec: HandlerSpec, value: Any) -> Outcome:
    """What the handler returned, checked: a JSON object (or None) that fits its result
    model, else a permanent failure saying why."""
    result = value
    if spec.result_model is not None or isinstance(result, BaseModel):
        try:
            result = as_result(spec, result)
        except ValidationError as exc:
            return failure("permanent", "InvalidResult", str(exc))
    # Checked here, not left to JobResult: a result it refused raised out of the delivery
    # task, which then neither reported nor acked the attempt.
    if result is not None and not isinstance(result, dict):
        return failure(
            "permanent",
            "InvalidResult",
            f"a handler returns a JSON object or None, not {type(result).__name__}",
        )
    try:
        to_json(result)
    except PydanticSerializationError as exc:
        return failure("permanent", "ResultNotSerializable", str(exc))
    return "succeeded", result, None
