"""Validation of a job submission, the owner rule and the idempotency request hash."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ConfigDict, EmailStr, Field, ValidationError

from jobs_common.api_models import CamelModel
from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail, Forbidden, ValidationFailed
from jobs_common.payloads import PAYLOAD_MODELS

MAX_TIMEOUT_SECONDS = 1700
IDEMPOTENCY_KEY_MAX = 200


class JobCreate(CamelModel):
    """The body of ``POST /api/v1/jobs``."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, max_length=100, description="A registered job type.")
    priority: int = Field(strict=True, ge=1, le=3, description="1 low, 2 medium, 3 high.")
    submitted_by: EmailStr | None = Field(
        default=None, description="Owner; defaults to the caller (only admins may differ)."
    )
    payload: dict[str, Any] = Field(description="Validated against the type's payload schema.")
    max_attempts: int | None = Field(default=None, strict=True, ge=1, le=20)
    timeout_seconds: int | None = Field(default=None, strict=True, ge=1, le=MAX_TIMEOUT_SECONDS)


@dataclass(frozen=True)
class ValidatedJob:
    """A submission whose shape and payload passed validation (owner not yet resolved)."""

    job_type: str
    priority: int
    requested_owner: str | None
    payload: dict[str, Any]
    max_attempts: int | None
    timeout_seconds: int | None


@dataclass(frozen=True)
class JobRequest:
    """A validated submission with its owner resolved: what gets stored and hashed."""

    job_type: str
    priority: int
    submitted_by: str
    payload: dict[str, Any]
    max_attempts: int | None
    timeout_seconds: int | None

    def canonical(self) -> dict[str, Any]:
        return {
            "type": self.job_type,
            "priority": self.priority,
            "submittedBy": self.submitted_by,
            "payload": self.payload,
            "maxAttempts": self.max_attempts,
            "timeoutSeconds": self.timeout_seconds,
        }

    def request_hash(self) -> str:
        """sha256 of the canonical JSON (sorted keys): equal for semantically equal requests."""
        canonical = orjson.dumps(self.canonical(), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(canonical).hexdigest()


def _details(errors: Iterable[Mapping[str, Any]], prefix: str = "") -> list[ErrorDetail]:
    details = []
    for error in errors:
        path = ".".join(str(part) for part in (prefix, *error["loc"]) if part != "")
        details.append(ErrorDetail(field=path or "body", message=str(error["msg"])))
    return details


def validate_job(data: object) -> ValidatedJob:
    """Validate a decoded JSON body; every problem is reported at once with its field path.

    Raises :class:`ValidationFailed` (422) and nothing else.
    """
    details: list[ErrorDetail] = []
    body: JobCreate | None = None
    try:
        body = JobCreate.model_validate(data)
    except ValidationError as exc:
        details.extend(_details(exc.errors()))
    payload: dict[str, Any] | None = None
    if isinstance(data, Mapping):
        job_type, raw_payload = data.get("type"), data.get("payload")
        if isinstance(job_type, str) and job_type and job_type not in PAYLOAD_MODELS:
            known = ", ".join(sorted(PAYLOAD_MODELS))
            details.append(
                ErrorDetail(field="type", message=f"unknown job type; expected one of: {known}")
            )
        elif isinstance(job_type, str) and isinstance(raw_payload, Mapping):
            try:
                model = PAYLOAD_MODELS[job_type].model_validate(raw_payload)
            except ValidationError as exc:
                details.extend(_details(exc.errors(), prefix="payload"))
            else:
                payload = model.model_dump(mode="json", by_alias=True)
    if details or body is None or payload is None:
        raise ValidationFailed("request validation failed", details=_dedupe(details))
    return ValidatedJob(
        job_type=body.type,
        priority=body.priority,
        requested_owner=body.submitted_by,
        payload=payload,
        max_attempts=body.max_attempts,
        timeout_seconds=body.timeout_seconds,
    )


def _dedupe(details: list[ErrorDetail]) -> list[ErrorDetail]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for detail in details:
        key = (detail.field, detail.message)
        if key not in seen:
            seen.add(key)
            unique.append(detail)
    return unique or [ErrorDetail(field="body", message="invalid request")]


def resolve_owner(job: ValidatedJob, identity: Identity) -> JobRequest:
    """Apply the owner rule: the caller by default; someone else only for an admin."""
    owner = (job.requested_owner or identity.email).strip().lower()
    if owner != identity.email.strip().lower() and not identity.is_admin:
        raise Forbidden("only an admin may submit jobs on behalf of another user")
    return JobRequest(
        job_type=job.job_type,
        priority=job.priority,
        submitted_by=owner,
        payload=job.payload,
        max_attempts=job.max_attempts,
        timeout_seconds=job.timeout_seconds,
    )
