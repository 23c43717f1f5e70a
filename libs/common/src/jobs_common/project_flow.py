"""A project's weight in fair dispatch between the dashboard and the scheduler, which owns
``project_flow`` (docs/flow-control.md, "Project weights").

The dashboard reads a project's weight from the job store and checks a change against the
public API's schema and the caller's role, then sends the scheduler's internal API
(``/internal/v1/projects/{projectId}/flow``) a :class:`ProjectFlowChange` with the caller's
identity headers. The scheduler checks the caller's scope again, writes the row and answers
with a :class:`ProjectFlowView`. A project without a row weighs :data:`DEFAULT_WEIGHT`."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Self

from pydantic import ConfigDict, Field

from jobs_common.api_models import CamelModel
from jobs_common.queue_commands import queue_projects
from jobs_common.tenancy import Scope

PROJECT_FLOW_PATH = "/internal/v1/projects/{projectId}/flow"
DEFAULT_WEIGHT = 1
MAX_WEIGHT = 100  # the table's CHECK (migration 0017)


def project_flow_path(project_id: uuid.UUID) -> str:
    return PROJECT_FLOW_PATH.format(projectId=project_id)


class ProjectFlowChange(CamelModel):
    """The body of a PUT: the project's new weight."""

    model_config = ConfigDict(extra="forbid")

    weight: int = Field(
        strict=True,
        ge=DEFAULT_WEIGHT,
        le=MAX_WEIGHT,
        description="Dispatches the project gets per round when several projects have work "
        "waiting in the same ready queue (1-100; a project never given one weighs 1).",
    )


class ProjectFlowView(CamelModel):
    project_id: uuid.UUID
    weight: int = Field(description="The project's weight in fair dispatch (1-100).")
    updated_by: str | None = Field(description="Who set it last; null: never set.")
    updated_at: datetime | None = Field(description="When it was set last; null: never set.")

    @classmethod
    def unset(cls, project_id: uuid.UUID) -> Self:
        """The view of a project never given a weight."""
        return cls(project_id=project_id, weight=DEFAULT_WEIGHT, updated_by=None, updated_at=None)


def reaches(scope: Scope, project_id: uuid.UUID) -> bool:
    """Whether ``scope`` reaches ``project_id``'s weight: as a project's queues, a caller
    scoped by its own rows reaches its personal project's (:func:`queue_projects`)."""
    projects = queue_projects(scope)
    return projects is None or project_id in projects
