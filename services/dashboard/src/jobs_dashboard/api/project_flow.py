"""A project's weight in fair dispatch and its quotas (docs/flow-control.md, "Project
weights" and "Quotas"): read them (a viewer of the project) and change the fields given (an
admin).

The dashboard reads the settings; a change goes to the scheduler, which owns ``project_flow``
(``adapters/scheduler_api.py``): the request is checked here (its schema, the caller's role in
the project: 403 below admin, 404 where the caller does not see the project) and the
scheduler checks the scope again before it writes."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request

from jobs_common.project_flow import ProjectFlowChange, ProjectFlowView
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_dashboard.adapters.project_flow import ProjectFlowStore
from jobs_dashboard.api.deps import SchedulerDep

router = APIRouter(prefix="/api/project-flow", tags=["flow"])

ProjectId = Annotated[uuid.UUID, Path(alias="projectId", description="The project's id.")]
MISSING = "project not found"


async def get_project_flow(request: Request) -> ProjectFlowStore:
    store: ProjectFlowStore = request.app.state.project_flow
    return store


ProjectFlowDep = Annotated[ProjectFlowStore, Depends(get_project_flow)]


@router.get(
    "/{projectId}",
    summary="A project's weight in fair dispatch (1 when never set) and its quotas",
)
async def get_flow(
    project_id: ProjectId, identity: CurrentIdentity, store: ProjectFlowDep
) -> ProjectFlowView:
    identity.require(str(project_id), OrgRole.VIEWER, to="read the flow settings", missing=MISSING)
    return await store.get(project_id)


@router.put(
    "/{projectId}",
    summary="Change a project's weight or quotas (its admins): the fields given change",
    responses={
        422: {
            "description": "No field, a weight that is not an integer from 1 to 100, or a "
            "quota that is not an integer from 1 (or null)"
        }
    },
)
async def set_flow(
    project_id: ProjectId,
    change: ProjectFlowChange,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
) -> ProjectFlowView:
    identity.require(str(project_id), OrgRole.ADMIN, to="change the flow settings", missing=MISSING)
    return await scheduler.set_project_flow(project_id, change, identity)
