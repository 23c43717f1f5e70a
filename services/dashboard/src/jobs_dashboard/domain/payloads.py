"""Payload validation shared by requeues and schedule templates (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_common.payloads import PAYLOAD_MODELS


def _details(errors: Iterable[Mapping[str, Any]], prefix: str) -> list[ErrorDetail]:
    return [
        ErrorDetail(
            field=".".join(str(part) for part in (prefix, *error["loc"]) if part != ""),
            message=str(error["msg"]),
        )
        for error in errors
    ]


def validate_payload(job_type: str, payload: Mapping[str, Any], *, prefix: str) -> dict[str, Any]:
    """``payload`` validated with the type's schema and dumped with its JSON (camelCase) names.

    Raises ValidationFailed with field paths under ``prefix`` (``payload.to``).
    """
    model = PAYLOAD_MODELS.get(job_type)
    if model is None:
        known = ", ".join(sorted(PAYLOAD_MODELS))
        raise ValidationFailed(
            "request validation failed",
            details=[
                ErrorDetail(
                    field=prefix,
                    message=f"job type {job_type!r} has no payload schema (known: {known})",
                )
            ],
        )
    try:
        validated = model.model_validate(dict(payload))
    except ValidationError as exc:
        raise ValidationFailed(
            "request validation failed", details=_details(exc.errors(), prefix)
        ) from exc
    dumped: dict[str, Any] = validated.model_dump(mode="json", by_alias=True)
    return dumped
