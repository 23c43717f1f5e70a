"""``/api/v1/job-types``: the job types the platform knows (the registry, app/type_registry.py);
``/internal/v1/job-types/{type}/check``: a payload checked for its type, storing nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import ConfigDict, Field, ValidationError

from jobs_common.api_models import CamelModel
from jobs_common.errors import ValidationFailed
from jobs_submission.api.deps import CurrentIdentity
from jobs_submission.api.routes import ERRORS, json_body
from jobs_submission.app.type_registry import TypeRegistry
from jobs_submission.domain.fields import field_details


class JobTypeOut(CamelModel):
    type: str
    builtin: bool = Field(
        description="One of the four types whose handlers ship with the worker; announced and "
        "validated like any other."
    )
    payload_schema: dict[str, Any] = Field(description="JSON Schema a payload must satisfy.")
    result_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema of the result, when the handler declares one."
    )
    queue: str
    timeout_seconds: int | None = Field(
        default=None, description="The type's default; null: the platform's (300 s)."
    )
    max_attempts: int | None = Field(
        default=None, description="The type's default; null: the platform's (3)."
    )
    slots: int = Field(description="Concurrency slots one job of the type takes on a worker.")
    live_workers: int = Field(description="Workers that announced the type recently.")
    waiting_reason: str | None = Field(
        default=None,
        description="Why jobs of the type wait (queued, not dispatched) right now: no live "
        "worker serves it; they start when one does. Null while a worker serves it.",
    )
    announced_at: datetime | None = Field(
        default=None, description="When a worker last announced this schema; null: never."
    )


class JobTypesOut(CamelModel):
    types: list[JobTypeOut]


class PayloadCheckIn(CamelModel):
    model_config = ConfigDict(extra="forbid")

    payload: dict[str, Any]


class PayloadCheckOut(CamelModel):
    type: str
    payload: dict[str, Any] = Field(description="The payload as a submission stores it.")
    queue: str
    timeout_seconds: int | None = Field(description="The type's default; null: the platform's.")
    max_attempts: int | None = Field(description="The type's default; null: the platform's.")


def build_job_types_router() -> APIRouter:
    router = APIRouter(prefix="/api/v1/job-types", tags=["job types"])

    @router.get("", response_model=JobTypesOut, responses={401: ERRORS[401]})
    async def list_job_types(request: Request, identity: CurrentIdentity) -> JobTypesOut:
        """Every job type a submission may name: those workers have announced (the built-in
        ones too), with the payload schema, queue, defaults and how many live workers serve
        it. A type no worker has announced yet is not listed, and refused at submission."""
        registry: TypeRegistry = request.app.state.types
        rows = await registry.listing()
        return JobTypesOut(types=[JobTypeOut.model_validate(row) for row in rows])

    return router


def build_payload_check_router() -> APIRouter:
    """Service to service (the dashboard), under ``/internal``: the gateway routes no path
    there, and it is left out of the OpenAPI documents (docs/dashboard.md describes it)."""
    router = APIRouter(prefix="/internal/v1/job-types", include_in_schema=False)

    @router.post(
        "/{jobType}/check",
        response_model=PayloadCheckOut,
        responses={code: ERRORS[code] for code in (400, 401, 422)},
    )
    async def check_payload(
        request: Request,
        identity: CurrentIdentity,
        job_type: Annotated[str, Path(alias="jobType", max_length=100)],
    ) -> PayloadCheckOut:
        """Check a payload for a type as a submission would and store nothing: how the
        dashboard validates a schedule's job template and an edited requeue (service to
        service; the gateway does not route it). Field paths start at ``payload``."""
        try:
            body = PayloadCheckIn.model_validate(await json_body(request))
        except ValidationError as exc:
            raise ValidationFailed(
                "request validation failed", details=field_details(exc.errors(), "")
            ) from exc
        registry: TypeRegistry = request.app.state.types
        catalog = await registry.catalog_for([job_type])
        if job_type not in catalog:
            raise ValidationFailed(
                "request validation failed", details=[catalog.unknown(job_type, field="type")]
            )
        payload, problems = catalog.check_payload(job_type, body.payload, at="payload")
        if problems or payload is None:
            raise ValidationFailed("request validation failed", details=problems)
        max_attempts, timeout_seconds = catalog.defaults(job_type)
        return PayloadCheckOut(
            type=job_type,
            payload=payload,
            queue=catalog.queue_of(job_type),
            timeout_seconds=timeout_seconds,
            max_attempts=max_attempts,
        )

    return router
