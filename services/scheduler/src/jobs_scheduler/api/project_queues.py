"""``/internal/v1/queues``: create, change, pause, resume and delete a project's queues for
the dashboard, which checked the request (``jobs_common.queue_commands``). Service to service:
the gateway routes no path under ``/internal`` and the routes are left out of OpenAPI. A queue
is created in the request's project; a caller changes the queues of the projects where it is
at least an admin (the platform admin: all); any other is not found."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from jobs_common.errors import Conflict, ErrorDetail, NotFound
from jobs_common.queue_commands import (
    QUEUES_PATH,
    QueueCreate,
    QueuePatch,
    QueueView,
    queue_project,
)
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_scheduler.adapters import project_queues
from jobs_scheduler.adapters.project_queues import Removed
from jobs_scheduler.api.deps import engine_of, scope_of

router = APIRouter(prefix=QUEUES_PATH, include_in_schema=False)

QueueId = Annotated[uuid.UUID, Path(alias="queueId")]


def not_found(queue_id: uuid.UUID) -> NotFound:
    return NotFound(f"queue {queue_id} not found")


@router.post("", status_code=201)
async def create_queue(
    request: Request, command: QueueCreate, identity: CurrentIdentity
) -> QueueView:
    view = await project_queues.create(
        engine_of(request), command, project_id=queue_project(identity), by=identity.actor
    )
    if view is None:
        raise Conflict(
            f"a queue named {command.name!r} already exists",
            details=[ErrorDetail(field="name", message="already used by a queue of this project")],
        )
    return view


@router.patch("/{queueId}")
async def change_queue(
    request: Request, queue_id: QueueId, patch: QueuePatch, identity: CurrentIdentity
) -> QueueView:
    view = await project_queues.change(
        engine_of(request), queue_id, scope_of(identity, OrgRole.ADMIN), patch
    )
    if view is None:
        raise not_found(queue_id)
    return view


async def set_paused(
    request: Request, queue_id: uuid.UUID, identity: CurrentIdentity, *, paused: bool
) -> QueueView:
    view = await project_queues.set_paused(
        engine_of(request),
        queue_id,
        scope_of(identity, OrgRole.ADMIN),
        paused=paused,
        by=identity.actor,
    )
    if view is None:
        raise not_found(queue_id)
    return view


@router.post("/{queueId}/pause")
async def pause_queue(request: Request, queue_id: QueueId, identity: CurrentIdentity) -> QueueView:
    return await set_paused(request, queue_id, identity, paused=True)


@router.post("/{queueId}/resume")
async def resume_queue(request: Request, queue_id: QueueId, identity: CurrentIdentity) -> QueueView:
    return await set_paused(request, queue_id, identity, paused=False)


@router.delete("/{queueId}", status_code=204)
async def delete_queue(request: Request, queue_id: QueueId, identity: CurrentIdentity) -> Response:
    removed = await project_queues.remove(
        engine_of(request), queue_id, scope_of(identity, OrgRole.ADMIN)
    )
    if removed is Removed.MISSING:
        raise not_found(queue_id)
    if removed is Removed.BUSY:
        raise Conflict(f"queue {queue_id} has unfinished jobs; wait for them or cancel them")
    return Response(status_code=204)
