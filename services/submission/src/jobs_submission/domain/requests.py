"""Validation of a job submission, the owner rule and the idempotency request hash."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson
from pydantic import ConfigDict, EmailStr, Field, ValidationError, field_validator

from jobs_common.api_models import CamelModel
from jobs_common.auth import Identity
from jobs_common.contracts import QUEUE_NAME_PATTERN, RetryPolicySpec, utcnow
from jobs_common.errors import ErrorDetail, Forbidden, ValidationFailed
from jobs_submission.domain.fields import (
    MAX_DELAY_SECONDS,
    MAX_DEPENDENCIES,
    REF_PATTERN,
    Dependency,
    RetryPolicyField,
    RetryPolicyIn,
    RunAt,
    field_details,
)
from jobs_submission.domain.job_types import TypeCatalog
from jobs_submission.domain.projects import as_id, project_for

MAX_TIMEOUT_SECONDS = 1700
IDEMPOTENCY_KEY_MAX = 200
MAX_RUN_AHEAD = timedelta(seconds=MAX_DELAY_SECONDS)


class _JobFields(CamelModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, max_length=100, description="A registered job type.")
    priority: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=3,
        description="1 low, 2 medium, 3 high; default: its queue's default priority "
        "(docs/flow-control.md), else 2.",
    )
    submitted_by: EmailStr | None = Field(
        default=None, description="Owner; defaults to the caller (only admins may differ)."
    )
    payload: dict[str, Any] = Field(
        description="Validated against the type's payload schema; at most 256 KiB of JSON "
        "(image_resize: its image, up to 5 MB)."
    )
    max_attempts: int | None = Field(default=None, strict=True, ge=1, le=20)
    timeout_seconds: int | None = Field(default=None, strict=True, ge=1, le=MAX_TIMEOUT_SECONDS)
    run_at: RunAt | None = None
    delay_seconds: int | None = Field(
        default=None,
        strict=True,
        ge=0,
        le=MAX_DELAY_SECONDS,
        description="Run this many seconds after acceptance; not together with runAt.",
    )
    retry_policy: RetryPolicyField | None = Field(
        default=None, description="An inline policy object, or the name of a stored policy."
    )
    queue: str | None = Field(
        default=None,
        pattern=QUEUE_NAME_PATTERN,
        description="The project's queue (docs/flow-control.md) the job runs in, with its "
        "limits; default: its type's queue. A worker serving the type runs it wherever.",
    )

    @staticmethod
    def _unique(values: list[str]) -> list[str]:
        if len(set(values)) != len(values):
            raise ValueError("entries must be unique")
        return values


class JobCreate(_JobFields):
    """The body of ``POST /api/v1/jobs``."""

    project_id: uuid.UUID | None = Field(
        default=None,
        description="The project (its id) the job belongs to; defaults to the one X-Project "
        "names, else your personal default project. You need the member role there.",
    )

    depends_on: list[uuid.UUID] | None = Field(
        default=None,
        max_length=MAX_DEPENDENCIES,
        description="Job ids (your own) that must succeed before this job runs.",
    )

    @field_validator("depends_on")
    @classmethod
    def _unique_parents(cls, value: list[uuid.UUID] | None) -> list[uuid.UUID] | None:
        if value is not None:
            cls._unique([str(v) for v in value])
        return value


class BatchJobSpec(_JobFields):
    """One entry of ``POST /api/v1/batches``: a job spec plus an optional in-batch ``ref``."""

    ref: str | None = Field(
        default=None, pattern=REF_PATTERN, description="A label, unique within the batch."
    )
    depends_on: list[Dependency] | None = Field(
        default=None,
        max_length=MAX_DEPENDENCIES,
        description="Job ids, or ref:<label> of another spec of the same batch.",
    )

    @field_validator("depends_on")
    @classmethod
    def _unique_parents(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else cls._unique(value)


@dataclass(frozen=True)
class ValidatedJob:
    """A submission whose shape and payload passed validation (owner not yet resolved)."""

    job_type: str
    priority: int | None  # None: its queue's default
    requested_owner: str | None
    payload: dict[str, Any]
    max_attempts: int | None
    timeout_seconds: int | None
    run_at: datetime | None = None
    delay_seconds: int | None = None
    retry_policy: RetryPolicySpec | None = None
    retry_policy_name: str | None = None
    depends_on: tuple[str, ...] = ()
    ref: str | None = None
    queue: str = "default"  # the one it names, else its type's (the registry's)
    requested_project: str | None = None
    queue_named: bool = False  # named in the request: hashed
    # The request named no timeout: ``timeout_seconds`` is its type's, and its queue's
    # default timeout comes first (the scheduler applies it).
    timeout_default: bool = False


@dataclass(frozen=True)
class JobRequest:
    """A validated submission with its owner resolved: what gets stored and hashed.

    ``depends_on`` holds job ids (and, inside a batch, ``ref:<label>`` entries).
    """

    job_type: str
    priority: int | None  # None: its queue's default (the scheduler applies it)
    submitted_by: str
    payload: dict[str, Any]
    max_attempts: int | None
    timeout_seconds: int | None
    run_at: datetime | None = None
    delay_seconds: int | None = None
    retry_policy: RetryPolicySpec | None = None
    retry_policy_name: str | None = None
    depends_on: tuple[str, ...] = field(default=())
    ref: str | None = None
    queue: str = "default"  # the one it names (then hashed), else its type's (never hashed)
    queue_named: bool = False
    # Resolved with the owner (domain/projects.py); idempotency keys are unique per project.
    project_id: str | None = None
    # The prefix of the API key that submitted it, if one: recorded in its timeline, never
    # hashed (the same request through a key or its creator's session replays alike).
    api_key: str | None = None
    timeout_default: bool = False  # as ValidatedJob's; never hashed

    def first_run_at(self, accepted_at: datetime) -> datetime | None:
        """``runAt`` as given, or acceptance + ``delaySeconds``; ``None`` means at once."""
        if self.run_at is not None:
            return self.run_at
        if self.delay_seconds is not None:
            return accepted_at + timedelta(seconds=self.delay_seconds)
        return None

    def retry_policy_json(self) -> dict[str, Any] | None:
        if self.retry_policy is None:
            return None
        return self.retry_policy.model_dump(mode="json", by_alias=True, exclude_none=True)

    def canonical(self) -> dict[str, Any]:
        """The hashed form. Scheduling keys appear only when set, so that hashes of requests
        stored before they existed stay valid."""
        canonical: dict[str, Any] = {
            "type": self.job_type,
            "priority": self.priority,
            "submittedBy": self.submitted_by,
            "payload": self.payload,
            "maxAttempts": self.max_attempts,
            "timeoutSeconds": self.timeout_seconds,
        }
        optional: dict[str, Any] = {
            "runAtMs": None if self.run_at is None else int(self.run_at.timestamp() * 1000),
            "delaySeconds": self.delay_seconds,
            "retryPolicy": self.retry_policy_json(),
            "retryPolicyName": self.retry_policy_name,
            "dependsOn": sorted(self.depends_on) or None,
            "ref": self.ref,
            "queue": self.queue if self.queue_named else None,
        }
        canonical.update({k: v for k, v in optional.items() if v is not None})
        return canonical

    def request_hash(self) -> str:
        """sha256 of the canonical JSON (sorted keys): equal for semantically equal requests."""
        return hash_json(self.canonical())


def hash_json(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def check_job(
    data: object,
    *,
    now: datetime,
    model: type[JobCreate] | type[BatchJobSpec] = JobCreate,
    prefix: str = "",
    catalog: TypeCatalog,
) -> tuple[ValidatedJob | None, list[ErrorDetail]]:
    """Validate one job spec against the known types of ``catalog``; returns it, or ``None``
    with every problem and its field path."""
    at = f"{prefix}." if prefix else ""
    details: list[ErrorDetail] = []
    body: JobCreate | BatchJobSpec | None = None
    try:
        body = model.model_validate(data)
    except ValidationError as exc:
        details.extend(field_details(exc.errors(), prefix))
    payload: dict[str, Any] | None = None
    if isinstance(data, Mapping):
        job_type, raw_payload = data.get("type"), data.get("payload")
        if isinstance(job_type, str) and job_type and job_type not in catalog:
            details.append(catalog.unknown(job_type, field=f"{at}type"))
        elif isinstance(job_type, str) and job_type and isinstance(raw_payload, Mapping):
            payload, problems = catalog.check_payload(job_type, raw_payload, at=f"{at}payload")
            details.extend(
                problem.model_copy(update={"field": f"{at}type"})
                if problem.field == "type"
                else problem
                for problem in problems
            )
        if data.get("runAt") is not None and data.get("delaySeconds") is not None:
            details.append(
                ErrorDetail(
                    field=f"{at}delaySeconds", message="give runAt or delaySeconds, not both"
                )
            )
    if body is not None and body.run_at is not None and body.run_at - now > MAX_RUN_AHEAD:
        details.append(ErrorDetail(field=f"{at}runAt", message="at most 1 year ahead"))
    if details or body is None or payload is None:
        return None, details
    policy = body.retry_policy
    max_attempts, timeout_seconds = catalog.defaults(body.type)
    return (
        ValidatedJob(
            job_type=body.type,
            priority=body.priority,
            requested_owner=body.submitted_by,
            payload=payload,
            max_attempts=body.max_attempts or max_attempts,
            timeout_seconds=body.timeout_seconds or timeout_seconds,
            timeout_default=body.timeout_seconds is None,
            run_at=body.run_at,
            delay_seconds=body.delay_seconds,
            retry_policy=policy.to_spec() if isinstance(policy, RetryPolicyIn) else None,
            retry_policy_name=policy if isinstance(policy, str) else None,
            depends_on=tuple(str(parent) for parent in body.depends_on or ()),
            ref=body.ref if isinstance(body, BatchJobSpec) else None,
            queue=body.queue or catalog.queue_of(body.type),
            requested_project=as_id(body.project_id) if isinstance(body, JobCreate) else None,
            queue_named=body.queue is not None,
        ),
        [],
    )


def validate_job(
    data: object, *, catalog: TypeCatalog, now: datetime | None = None
) -> ValidatedJob:
    """Validate a decoded JSON body; every problem is reported at once with its field path.

    Raises :class:`ValidationFailed` (422) and nothing else.
    """
    job, details = check_job(data, now=now or utcnow(), catalog=catalog)
    if job is None:
        raise ValidationFailed("request validation failed", details=dedupe(details))
    return job


def dedupe(details: list[ErrorDetail]) -> list[ErrorDetail]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for detail in details:
        key = (detail.field, detail.message)
        if key not in seen:
            seen.add(key)
            unique.append(detail)
    return unique or [ErrorDetail(field="body", message="invalid request")]


def normalize_owner(email: str) -> str:
    return email.strip().lower()


def with_owner(
    job: ValidatedJob, owner: str, project_id: str, api_key: str | None = None
) -> JobRequest:
    return JobRequest(
        job_type=job.job_type,
        priority=job.priority,
        submitted_by=owner,
        payload=job.payload,
        max_attempts=job.max_attempts,
        timeout_seconds=job.timeout_seconds,
        timeout_default=job.timeout_default,
        run_at=job.run_at,
        delay_seconds=job.delay_seconds,
        retry_policy=job.retry_policy,
        retry_policy_name=job.retry_policy_name,
        depends_on=job.depends_on,
        ref=job.ref,
        queue=job.queue,
        queue_named=job.queue_named,
        project_id=project_id,
        api_key=api_key,
    )


def owner_for(requested: str | None, identity: Identity) -> str:
    """The owner rule: the caller by default; someone else only for an admin."""
    owner = normalize_owner(requested or identity.email)
    if owner != normalize_owner(identity.email) and not identity.is_admin:
        raise Forbidden("only an admin may submit jobs on behalf of another user")
    return owner


def resolve_owner(job: ValidatedJob, identity: Identity) -> JobRequest:
    """Apply the owner rule and the project rule (``domain/projects.py``) to a single
    submission."""
    owner = owner_for(job.requested_owner, identity)
    project = project_for(job.requested_project, owner, identity)
    return with_owner(job, owner, project, identity.api_key)


def unknown_parents(
    parents: Iterable[tuple[str, str]], projects: Mapping[str, str], project: str | None
) -> list[ErrorDetail]:
    """``(field, job_id)`` pairs whose job is unknown or of another project: one 422 detail
    each, with the same message in both cases so that foreign jobs' existence is not
    revealed."""
    return [
        ErrorDetail(field=path, message="unknown job")
        for path, job_id in parents
        if projects.get(job_id) != project
    ]
