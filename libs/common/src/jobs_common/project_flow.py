"""A project's flow settings between the dashboard, the submission service and the
scheduler, which owns ``project_flow`` (docs/flow-control.md, "Project weights" and
"Quotas").

The dashboard reads a project's settings from the job store and checks a change against the
public API's schema and the caller's role, then sends the scheduler's internal API
(``/internal/v1/projects/{projectId}/flow``) a :class:`ProjectFlowChange` with the caller's
identity headers. The scheduler checks the caller's scope again, writes the fields given and
answers with a :class:`ProjectFlowView`. A project without a row weighs
:data:`DEFAULT_WEIGHT` and has no quota.

The submission service asks the scheduler (``/internal/v1/projects/{projectId}/quota``, with
the caller's identity headers) for a :class:`ProjectQuota`: the project's quotas and, when it
has a limit on waiting jobs, how many wait now."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Self

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from jobs_common.api_models import CamelModel
from jobs_common.queue_commands import queue_projects
from jobs_common.tenancy import Scope

PROJECT_FLOW_PATH = "/internal/v1/projects/{projectId}/flow"
PROJECT_QUOTA_PATH = "/internal/v1/projects/{projectId}/quota"
DEFAULT_WEIGHT = 1
MAX_WEIGHT = 100  # the table's CHECK (migration 0017)
MAX_QUOTA = 2**31 - 1  # the columns are PostgreSQL integers (migration 0018)

Weight = Annotated[int, Field(strict=True, ge=DEFAULT_WEIGHT, le=MAX_WEIGHT)]
Quota = Annotated[int, Field(strict=True, ge=1, le=MAX_QUOTA)]


def project_flow_path(project_id: uuid.UUID) -> str:
    return PROJECT_FLOW_PATH.format(projectId=project_id)


def project_quota_path(project_id: uuid.UUID) -> str:
    return PROJECT_QUOTA_PATH.format(projectId=project_id)


class ProjectFlowChange(CamelModel):
    """The body of a PUT: the fields given change, the others stay as they are (at least one
    field). A quota given as null is cleared; the weight cannot be null."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    weight: Weight | SkipJsonSchema[None] = Field(
        default=None,
        description="Dispatches the project gets per round when several projects have work "
        "waiting in the same ready queue (1-100; a project never given one weighs 1).",
    )
    max_waiting: Quota | None = Field(
        default=None,
        description="The project's jobs waiting (unfinished, not running) at most, enforced "
        "at submission; null: no quota.",
    )
    max_submitted_per_day: Quota | None = Field(
        default=None,
        description="Jobs the project may submit per day at most, enforced at submission; "
        "null: no quota.",
    )
    max_running: Quota | None = Field(
        default=None,
        description="The project's jobs in flight (running, or sent to a worker) at most, "
        "across all its queues, enforced at dispatch: the others wait, queued; null: no limit.",
    )

    @field_validator("weight", mode="before")
    @classmethod
    def _weight_not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("the weight cannot be null: leave it out to keep it")
        return value

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not self.model_fields_set:
            raise ValueError(
                "give at least one of weight, maxWaiting, maxSubmittedPerDay, maxRunning"
            )
        return self

    def changes(self) -> dict[str, int | None]:
        """The given fields by column."""
        return {name: getattr(self, name) for name in sorted(self.model_fields_set)}


class ProjectFlowView(CamelModel):
    project_id: uuid.UUID
    weight: int = Field(description="The project's weight in fair dispatch (1-100).")
    max_waiting: int | None = Field(
        description="The project's jobs waiting (unfinished, not running) at most; null: no quota."
    )
    max_submitted_per_day: int | None = Field(
        description="Jobs the project may submit per day at most; null: no quota."
    )
    max_running: int | None = Field(
        description="The project's jobs in flight at most, across all its queues; null: no limit.",
    )
    updated_by: str | None = Field(description="Who set it last; null: never set.")
    updated_at: datetime | None = Field(description="When it was set last; null: never set.")

    @classmethod
    def unset(cls, project_id: uuid.UUID) -> Self:
        """The view of a project never given a setting."""
        return cls(
            project_id=project_id,
            weight=DEFAULT_WEIGHT,
            max_waiting=None,
            max_submitted_per_day=None,
            max_running=None,
            updated_by=None,
            updated_at=None,
        )


class ProjectQuota(CamelModel):
    """A project's quotas as the submission service checks them (internal only)."""

    project_id: uuid.UUID
    max_waiting: int | None
    max_submitted_per_day: int | None
    waiting: int | None = Field(
        description="The project's unfinished jobs not running now; null when it has no "
        "maxWaiting (not counted)."
    )


def reaches(scope: Scope, project_id: uuid.UUID) -> bool:
    """Whether ``scope`` reaches ``project_id``'s settings: as a project's queues, a caller
    scoped by its own rows reaches its personal project's (:func:`queue_projects`)."""
    projects = queue_projects(scope)
    return projects is None or project_id in projects
