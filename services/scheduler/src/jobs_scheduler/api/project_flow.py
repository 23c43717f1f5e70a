"""``/internal/v1/projects/{projectId}/flow``: read a project's weight in fair dispatch and
its quotas, and change the fields given, for the dashboard, which checked the request
(``jobs_common.project_flow``); ``/internal/v1/projects/{projectId}/quota``: the quotas with
the jobs waiting now, for the submission service. Service to service: the gateway routes no
path under ``/internal`` and the routes are left out of OpenAPI. A caller reads the settings
of the projects where it is at least a viewer and changes them where it is at least an admin
(the platform admin: all); any other project is not found."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Request

from jobs_common.auth import Identity
from jobs_common.errors import NotFound
from jobs_common.project_flow import (
    PROJECT_FLOW_PATH,
    PROJECT_QUOTA_PATH,
    ProjectFlowChange,
    ProjectFlowView,
    ProjectQuota,
    reaches,
)
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_scheduler.adapters import project_flow
from jobs_scheduler.api.deps import engine_of, scope_of

router = APIRouter(include_in_schema=False)

ProjectId = Annotated[uuid.UUID, Path(alias="projectId")]


def check(identity: Identity, project_id: uuid.UUID, at_least: OrgRole) -> None:
    if not reaches(scope_of(identity, at_least), project_id):
        raise NotFound(f"project {project_id} not found")


@router.get(PROJECT_FLOW_PATH)
async def read_flow(
    request: Request, project_id: ProjectId, identity: CurrentIdentity
) -> ProjectFlowView:
    check(identity, project_id, OrgRole.VIEWER)
    return await project_flow.read(engine_of(request), project_id)


@router.put(PROJECT_FLOW_PATH)
async def set_flow(
    request: Request, project_id: ProjectId, change: ProjectFlowChange, identity: CurrentIdentity
) -> ProjectFlowView:
    check(identity, project_id, OrgRole.ADMIN)
    return await project_flow.write(engine_of(request), project_id, change, by=identity.actor)


@router.get(PROJECT_QUOTA_PATH)
async def read_quota(
    request: Request, project_id: ProjectId, identity: CurrentIdentity
) -> ProjectQuota:
    check(identity, project_id, OrgRole.VIEWER)
    return await project_flow.quota(engine_of(request), project_id)
