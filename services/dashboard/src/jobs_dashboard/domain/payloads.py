"""Payload validation shared by requeues and schedule templates (pure): a built-in type's
here, by its model; another type's by the submission service, which owns the registry
(``adapters/job_types.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_common.payloads import PAYLOAD_MODELS
from jobs_common.topology import DEFAULT_QUEUE


@dataclass(frozen=True)
class CheckedPayload:
    """A payload as a submission of its type stores it, with the type's queue and defaults
    (``None``: the platform's)."""

    payload: dict[str, Any]
    queue: str = DEFAULT_QUEUE
    max_attempts: int | None = None
    timeout_seconds: int | None = None


class TypeChecker(Protocol):
    """Checks a payload of a type that is not built in (``adapters.job_types``)."""

    async def check(
        self, job_type: str, payload: dict[str, Any], *, identity: Identity, prefix: str
    ) -> CheckedPayload: ...


def moved_under(detail: ErrorDetail, prefix: str) -> ErrorDetail:
    """A detail about ``payload.x`` (or ``type``) reported under ``prefix`` instead."""
    field = detail.field
    if field == "payload" or field.startswith("payload."):
        field = prefix + field.removeprefix("payload")
    elif field == "type":
        field = prefix.rsplit(".", 1)[0] + ".type" if "." in prefix else "type"
    return detail.model_copy(update={"field": field})


async def check_payload(
    job_type: str,
    payload: Mapping[str, Any],
    *,
    prefix: str,
    identity: Identity,
    types: TypeChecker,
) -> CheckedPayload:
    """A built-in type's payload checked here; any other type's by the registry's owner."""
    if job_type in PAYLOAD_MODELS:
        return CheckedPayload(validate_payload(job_type, payload, prefix=prefix))
    return await types.check(job_type, dict(payload), identity=identity, prefix=prefix)


def _details(errors: Iterable[Mapping[str, Any]], prefix: str) -> list[ErrorDetail]:
    return [
        ErrorDetail(
            field=".".join(str(part) for part in (prefix, *error["loc"]) if part != ""),
            message=str(error["msg"]),
        )
        for error in errors
    ]


def validate_payload(job_type: str, payload: Mapping[str, Any], *, prefix: str) -> dict[str, Any]:
    """A built-in type's ``payload`` validated with its model and dumped with its JSON
    (camelCase) names. Raises ValidationFailed with field paths under ``prefix``."""
    try:
        validated = PAYLOAD_MODELS[job_type].model_validate(dict(payload))
    except ValidationError as exc:
        raise ValidationFailed(
            "request validation failed", details=_details(exc.errors(), prefix)
        ) from exc
    dumped: dict[str, Any] = validated.model_dump(mode="json", by_alias=True)
    return dumped
