"""``/api/v1/job-types``: the job types the platform knows (the registry, type_registry.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from jobs_common.api_models import CamelModel
from jobs_submission.api.deps import CurrentIdentity
from jobs_submission.api.routes import ERRORS
from jobs_submission.type_registry import TypeRegistry


class JobTypeOut(CamelModel):
    type: str
    builtin: bool = Field(description="One of the platform's four built-in types.")
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
    announced_at: datetime | None = Field(
        default=None, description="When a worker last announced this schema; null: never."
    )


class JobTypesOut(CamelModel):
    types: list[JobTypeOut]


def build_job_types_router() -> APIRouter:
    router = APIRouter(prefix="/api/v1/job-types", tags=["job types"])

    @router.get("", response_model=JobTypesOut, responses={401: ERRORS[401]})
    async def list_job_types(request: Request, identity: CurrentIdentity) -> JobTypesOut:
        """Every job type a submission may name: the built-ins and those workers announced,
        with the payload schema, queue, defaults and how many live workers serve it."""
        registry: TypeRegistry = request.app.state.types
        rows = await registry.listing()
        return JobTypesOut(types=[JobTypeOut.model_validate(row) for row in rows])

    return router
