"""A project's queues (docs/flow-control.md): list (with each queue's depth by status and
priority), their last hour, create, read, change, pause, resume, delete.

The dashboard reads the queues; their commands go to the scheduler, which owns them
(``adapters/scheduler_api.py``): the request is checked here (its schema, the caller's role
in the queue's project) and the scheduler decides the rest (a name taken or unfinished jobs
left: 409; an unknown default retry policy: 422; gone: 404)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from jobs_common.api_models import total_pages
from jobs_common.auth import Identity
from jobs_common.errors import NotFound
from jobs_common.queue_commands import (
    QueueCreate,
    QueuePage,
    QueuePatch,
    QueueView,
    queue_project,
)
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole, Scope
from jobs_dashboard.adapters.queues import QueueStore
from jobs_dashboard.api.deps import PageDep, SchedulerDep
from jobs_dashboard.domain.queue_history import DEFAULT_MINUTES, MOST_MINUTES, QueueHistoryPage

router = APIRouter(prefix="/api/queues", tags=["queues"])

QueueId = Annotated[uuid.UUID, Path(alias="queueId", description="The queue's id.")]
ProjectQuery = Annotated[
    uuid.UUID | None,
    Query(
        alias="projectId",
        description="The project (its id, slug or <org slug>/<slug>; or X-Project); by "
        "default the caller's own default project for a create, every project it sees for a "
        "listing.",
    ),
]


async def get_queues(request: Request) -> QueueStore:
    store: QueueStore = request.app.state.queues
    return store


QueuesDep = Annotated[QueueStore, Depends(get_queues)]


NameQuery = Annotated[
    str | None, Query(pattern=r"^[a-z][a-z0-9_-]{0,62}$", description="One queue by name.")
]


def readable(identity: Identity, project_id: uuid.UUID | None = None) -> Scope:
    scope = identity.scope(OrgRole.VIEWER)
    return scope if project_id is None else scope.narrowed_to(project_id)


@router.get("", summary="Queues of the caller's projects, by project and name")
async def list_queues(
    identity: CurrentIdentity,
    page: PageDep,
    store: QueuesDep,
    project_id: ProjectQuery = None,
    name: NameQuery = None,
) -> QueuePage:
    items, total = await store.page(readable(identity, project_id), page, name=name)
    return QueuePage.of(items, total, page)


# Before /{queueId}, which would take "history" for a queue's id.
@router.get(
    "/history",
    summary="The last hour of the queues a listing page shows: jobs waiting and running per minute",
    responses={404: {"description": "A projectId the caller does not see"}},
)
async def queue_history(
    identity: CurrentIdentity,
    page: PageDep,
    store: QueuesDep,
    project_id: ProjectQuery = None,
    name: NameQuery = None,
    minutes: Annotated[
        int,
        Query(
            ge=1,
            le=MOST_MINUTES,
            description="Points per queue, one a minute, ending with the current minute "
            "(samples are kept a day).",
        ),
    ] = DEFAULT_MINUTES,
) -> QueueHistoryPage:
    if project_id is not None:
        identity.require(
            str(project_id), OrgRole.VIEWER, to="read queues", missing="project not found"
        )
    first, items, total = await store.history(
        readable(identity, project_id), page, minutes=minutes, name=name
    )
    return QueueHistoryPage(
        items=items,
        page_number=page.page_number,
        page_size=page.page_size,
        total_items=total,
        total_pages=total_pages(total, page.page_size),
        first_minute=first,
        minutes=minutes,
    )


@router.post(
    "",
    status_code=201,
    summary="Create a queue in the request's project (its admins)",
    responses={
        409: {"description": "The project already has a queue of that name"},
        422: {"description": "Invalid limits, or no retry policy of that name"},
    },
)
async def create_queue(
    body: QueueCreate,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    project_id: ProjectQuery = None,
) -> QueueView:
    queue_project(identity)  # an admin of the request's project: 403 below, 404 outside
    return await scheduler.create_queue(body, identity)


@router.get("/{queueId}", summary="A queue with its jobs waiting and running now")
async def get_queue(queue_id: QueueId, identity: CurrentIdentity, store: QueuesDep) -> QueueView:
    view = await store.get(queue_id, readable(identity))
    if view is None:
        raise NotFound(f"queue {queue_id} not found")
    return view


async def may_manage(queue_id: uuid.UUID, identity: Identity, store: QueueStore) -> None:
    """A queue's commands take an admin (or owner) of its project: 403 below that, 404 where
    the caller does not see it. The scheduler checks the scope again."""
    view = await store.get(queue_id, readable(identity))
    missing = f"queue {queue_id} not found"
    if view is None:
        raise NotFound(missing)
    identity.require(str(view.project_id), OrgRole.ADMIN, to="manage queues", missing=missing)


@router.patch(
    "/{queueId}",
    summary="Change a queue's limits and defaults (a field left out stays; null clears it)",
)
async def change_queue(
    queue_id: QueueId,
    patch: QueuePatch,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    store: QueuesDep,
) -> QueueView:
    await may_manage(queue_id, identity, store)
    return await scheduler.change_queue(queue_id, patch, identity)


@router.post(
    "/{queueId}/pause",
    summary="Dispatch nothing more from the queue (idempotent); its jobs wait, running ones finish",
)
async def pause_queue(
    queue_id: QueueId, identity: CurrentIdentity, scheduler: SchedulerDep, store: QueuesDep
) -> QueueView:
    await may_manage(queue_id, identity, store)
    return await scheduler.set_queue_paused(queue_id, identity, paused=True)


@router.post("/{queueId}/resume", summary="Dispatch the queue's waiting jobs again (idempotent)")
async def resume_queue(
    queue_id: QueueId, identity: CurrentIdentity, scheduler: SchedulerDep, store: QueuesDep
) -> QueueView:
    await may_manage(queue_id, identity, store)
    return await scheduler.set_queue_paused(queue_id, identity, paused=False)


@router.delete(
    "/{queueId}",
    status_code=204,
    summary="Delete a queue that has no unfinished jobs",
    responses={409: {"description": "The queue still has unfinished jobs"}},
)
async def delete_queue(
    queue_id: QueueId, identity: CurrentIdentity, scheduler: SchedulerDep, store: QueuesDep
) -> Response:
    await may_manage(queue_id, identity, store)
    await scheduler.delete_queue(queue_id, identity)
    return Response(status_code=204)
