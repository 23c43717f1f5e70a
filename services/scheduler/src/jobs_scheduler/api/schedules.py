"""``/internal/v1/schedules``: create, create or update by name (``PUT /by-name``), edit by
id, run now, pause, resume and delete schedules for the dashboard,
which checked the request (``jobs_common.schedule_commands``). Service to service: the
gateway routes no path under ``/internal`` and the routes are left out of OpenAPI. A schedule
is created in the request's project; a caller changes the schedules of the projects where it
is at least an admin (the platform admin: all); any other is not found."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from jobs_common.errors import Conflict, ErrorDetail, NotFound
from jobs_common.request_identity import CurrentIdentity
from jobs_common.schedule_commands import (
    SCHEDULES_PATH,
    UPSERT_PATH,
    NewSchedule,
    RunNow,
    ScheduleEdit,
    ScheduleRun,
    ScheduleView,
)
from jobs_common.tenancy import OrgRole, personal_project_id
from jobs_scheduler.adapters import schedules
from jobs_scheduler.api.deps import engine_of, scope_of, work_of
from jobs_scheduler.app.run_now import run_now
from jobs_scheduler.domain.defaults import JobDefaults

router = APIRouter(prefix=SCHEDULES_PATH, include_in_schema=False)

ScheduleId = Annotated[uuid.UUID, Path(alias="scheduleId")]


def not_found(schedule_id: uuid.UUID) -> NotFound:
    return NotFound(f"schedule {schedule_id} not found")


@router.post("", status_code=201)
async def create_schedule(
    request: Request, command: NewSchedule, identity: CurrentIdentity
) -> ScheduleView:
    project = identity.project_id or str(personal_project_id(identity.email))
    identity.require(project, OrgRole.ADMIN, to="manage schedules", missing="project not found")
    view = await schedules.create(
        engine_of(request), command, owner=identity.email, project_id=uuid.UUID(project)
    )
    if view is None:
        raise Conflict(
            f"a schedule named {command.name!r} already exists",
            details=[
                ErrorDetail(field="name", message="already used by a schedule of this project")
            ],
        )
    return view


@router.put(UPSERT_PATH.removeprefix(SCHEDULES_PATH))
async def upsert_schedule(
    request: Request, response: Response, command: NewSchedule, identity: CurrentIdentity
) -> ScheduleView:
    """201 created, 200 updated in place (or unchanged); 409 when code declares it."""
    project = identity.project_id or str(personal_project_id(identity.email))
    identity.require(project, OrgRole.ADMIN, to="manage schedules", missing="project not found")
    view, created = await schedules.upsert(
        engine_of(request), command, owner=identity.email, project_id=uuid.UUID(project)
    )
    response.status_code = 201 if created else 200
    return view


@router.put("/{scheduleId}")
async def edit_schedule(
    request: Request, schedule_id: ScheduleId, command: ScheduleEdit, identity: CurrentIdentity
) -> ScheduleView:
    """200 edited; 409 when code declares it."""
    view = await schedules.edit(
        engine_of(request), schedule_id, scope_of(identity, OrgRole.ADMIN), command
    )
    if view is None:
        raise not_found(schedule_id)
    return view


@router.post("/{scheduleId}/run", status_code=202)
async def run_schedule_now(
    request: Request, schedule_id: ScheduleId, command: RunNow, identity: CurrentIdentity
) -> ScheduleRun:
    """202: the job is recorded (or was, by the same key: ``replayed``)."""
    defaults: JobDefaults = request.app.state.defaults
    work = partial(
        run_now,
        schedule_id=schedule_id,
        scope=scope_of(identity, OrgRole.ADMIN),
        key=command.key,
        defaults=defaults,
    )
    run = await work_of(request).run(work)
    if run is None:
        raise not_found(schedule_id)
    return run


async def set_paused(
    request: Request, schedule_id: uuid.UUID, identity: CurrentIdentity, *, paused: bool
) -> ScheduleView:
    view = await schedules.set_paused(
        engine_of(request), schedule_id, scope_of(identity, OrgRole.ADMIN), paused=paused
    )
    if view is None:
        raise not_found(schedule_id)
    return view


@router.post("/{scheduleId}/pause")
async def pause_schedule(
    request: Request, schedule_id: ScheduleId, identity: CurrentIdentity
) -> ScheduleView:
    return await set_paused(request, schedule_id, identity, paused=True)


@router.post("/{scheduleId}/resume")
async def resume_schedule(
    request: Request, schedule_id: ScheduleId, identity: CurrentIdentity
) -> ScheduleView:
    return await set_paused(request, schedule_id, identity, paused=False)


@router.delete("/{scheduleId}", status_code=204)
async def delete_schedule(
    request: Request, schedule_id: ScheduleId, identity: CurrentIdentity
) -> Response:
    if not await schedules.remove(
        engine_of(request), schedule_id, scope_of(identity, OrgRole.ADMIN)
    ):
        raise not_found(schedule_id)
    return Response(status_code=204)
