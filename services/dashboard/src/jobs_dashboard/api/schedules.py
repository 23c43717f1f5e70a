"""Cron schedules: create, create or update by name, edit, run now, list, detail with recent
fires, pause, resume, delete.

The dashboard reads the schedules; their commands go to the scheduler, which owns them
(``adapters/scheduler_api.py``): the request is checked here (its cron, its job template
against its type, the email rules) and the scheduler decides the rest (409, 429, 404)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Response
from pydantic import AfterValidator

from jobs_common.auth import Identity
from jobs_common.contracts import utcnow
from jobs_common.errors import ErrorDetail, NotFound, ValidationFailed
from jobs_common.payloads import header_safe
from jobs_common.recipients import RecipientAllowList
from jobs_common.request_identity import CurrentIdentity
from jobs_common.schedule_commands import (
    NewSchedule,
    ScheduleCaps,
    ScheduleEdit,
    ScheduleRun,
    ScheduleView,
)
from jobs_common.tenancy import OrgRole, personal_project_id
from jobs_dashboard.adapters.job_types import SubmissionTypes
from jobs_dashboard.adapters.schedules import ScheduleStore
from jobs_dashboard.api.deps import (
    OwnVisibilityDep,
    PageDep,
    SchedulerDep,
    SchedulesDep,
    SettingsDep,
    TypesDep,
)
from jobs_dashboard.domain.payloads import check_payload
from jobs_dashboard.domain.query import visibility_for
from jobs_dashboard.domain.schedules import (
    MAX_NAME_LENGTH,
    ScheduleCreate,
    ScheduleDetail,
    SchedulePage,
    ScheduleUpsert,
    refused_recipient,
    too_frequent_for_email,
)
from jobs_dashboard.settings import Settings

router = APIRouter(prefix="/api/schedules", tags=["schedules"])

ScheduleId = Annotated[uuid.UUID, Path(alias="scheduleId", description="The schedule's id.")]
ScheduleNamePath = Annotated[
    str, Path(description="The schedule's name, unique in its project (1-200 characters).")
]


@router.post(
    "",
    status_code=201,
    summary="Create a cron schedule in the request's project (its admins)",
    responses={
        409: {"description": "The caller already has a schedule of that name"},
        429: {"description": "The caller has as many schedules (of email jobs) as allowed"},
    },
)
async def create_schedule(
    body: ScheduleCreate,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    settings: SettingsDep,
    types: TypesDep,
) -> ScheduleView:
    command = await checked_command(body.name, body, identity, settings, types)
    return await scheduler.create_schedule(command, identity)


@router.put(
    "/by-name/{name}",
    summary="Create (201) or update in place (200) the request's project's schedule of a name",
    description="Cron, time zone and job template are replaced; the schedule keeps its id, "
    "owner, fire history and pause (a paused schedule stays paused). The next fire time is "
    "recomputed when cron or time zone changed. A deploy script may send it every time.",
    responses={
        201: {"description": "Created", "model": ScheduleView},
        409: {"description": "Declared in code: change it there"},
        429: {"description": "The caller has as many schedules (of email jobs) as allowed"},
    },
)
async def upsert_schedule(
    name: ScheduleNamePath,
    body: ScheduleUpsert,
    answer: Response,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    settings: SettingsDep,
    types: TypesDep,
) -> ScheduleView:
    command = await checked_command(name, body, identity, settings, types)
    view, created = await scheduler.upsert_schedule(command, identity)
    answer.status_code = 201 if created else 200
    return view


async def checked_command(
    name: str,
    body: ScheduleUpsert,
    identity: Identity,
    settings: Settings,
    types: SubmissionTypes,
) -> NewSchedule:
    """The command for the scheduler, once the caller may manage the project's schedules and
    the request passed every check (name, template against its type, email rules)."""
    identity.require(
        identity.project_id or str(personal_project_id(identity.email)),
        OrgRole.ADMIN,
        to="manage schedules",
        missing="project not found",
    )
    refused: list[ErrorDetail] = []
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        refused.append(ErrorDetail(field="name", message="1 to 200 characters"))
    template, caps = await checked_template(body, identity, settings, types, refused=refused)
    return NewSchedule(
        name=name, cron=body.cron, timezone=body.timezone, job_template=template, caps=caps
    )


async def checked_template(
    body: ScheduleUpsert,
    identity: Identity,
    settings: Settings,
    types: SubmissionTypes,
    *,
    refused: list[ErrorDetail],
) -> tuple[dict[str, Any], ScheduleCaps | None]:
    """The stored job template and the caller's caps (None: exempt), once the template passed
    its type's check and the email rules; raises ValidationFailed with ``refused`` and what
    these checks add."""
    job = body.job_template
    checked = await check_payload(
        job.type, job.payload, prefix="jobTemplate.payload", identity=identity, types=types
    )
    template = job.stored(checked)
    allowed = RecipientAllowList.of(settings.email_allowed_recipients)
    capped = not (identity.is_admin and settings.schedule_caps_exempt_admins)
    refused = [*refused, *refused_recipient(template, allowed)]
    if capped:
        interval = settings.min_email_schedule_interval_seconds
        refused += too_frequent_for_email(body, min_interval_seconds=interval, now=utcnow())
    if refused:
        raise ValidationFailed("request validation failed", details=refused)
    caps = ScheduleCaps(
        max_schedules=settings.max_schedules_per_user,
        max_email_schedules=settings.max_email_schedules_per_user,
    )
    return template, caps if capped else None


@router.get("", summary="Schedules of the caller's projects, by name")
async def list_schedules(
    visibility: OwnVisibilityDep, page: PageDep, store: SchedulesDep
) -> SchedulePage:
    items, total = await store.page(visibility, page)
    return SchedulePage.of(items, total, page)


@router.get("/{scheduleId}", summary="A schedule with its last 20 fires and their job statuses")
async def get_schedule(
    schedule_id: ScheduleId, visibility: OwnVisibilityDep, store: SchedulesDep
) -> ScheduleDetail:
    detail = await store.get(schedule_id, visibility)
    if detail is None:
        raise NotFound(f"schedule {schedule_id} not found")
    return detail


async def may_manage(schedule_id: uuid.UUID, identity: Identity, store: ScheduleStore) -> None:
    """A schedule's commands take an admin (or owner) of its project: 403 below that, 404
    where the caller does not see it. The scheduler checks the scope again."""
    detail = await store.get(schedule_id, visibility_for(identity))
    if detail is None:
        raise NotFound(f"schedule {schedule_id} not found")
    identity.require(
        str(detail.project_id),
        OrgRole.ADMIN,
        to="manage schedules",
        missing=f"schedule {schedule_id} not found",
    )


@router.put(
    "/{scheduleId}",
    summary="Edit a schedule: its cron, time zone and job template (payload, priority, "
    "limits, retry policy)",
    description="The schedule keeps its id, name, owner, pause and fire history; the next "
    "fire time is recomputed when cron or time zone changed (a paused schedule stays "
    "paused). A schedule declared in code is not edited here: 409, change its code.",
    responses={
        403: {"description": "Not an admin of the schedule's project"},
        404: {"description": "Unknown schedule, or another project's"},
        409: {"description": "Declared in code: change it there"},
        429: {"description": "The new template makes one email schedule too many"},
    },
)
async def edit_schedule(
    schedule_id: ScheduleId,
    body: ScheduleUpsert,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    store: SchedulesDep,
    settings: SettingsDep,
    types: TypesDep,
) -> ScheduleView:
    await may_manage(schedule_id, identity, store)
    template, caps = await checked_template(body, identity, settings, types, refused=[])
    edit = ScheduleEdit(cron=body.cron, timezone=body.timezone, job_template=template, caps=caps)
    return await scheduler.edit_schedule(schedule_id, edit, identity)


RunKey = Annotated[
    str | None,
    AfterValidator(header_safe),
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        description="Names the run: the same key again answers the first run (replayed: "
        "true) and runs nothing more. Without one, every call is a run.",
    ),
]


@router.post(
    "/{scheduleId}/run",
    status_code=202,
    summary="Run a schedule now: one job from its template, recorded as a fire of it",
    description="The job is made as a cron fire makes it (type, payload, project, owner, "
    "priority, limits, retry policy) and listed in the schedule's fires; the next fire "
    "time does not move. A paused schedule runs too. 202 once the job is recorded.",
    responses={
        403: {"description": "Not an admin of the schedule's project"},
        404: {"description": "Unknown schedule, or another project's"},
        409: {"description": "The schedule's template cannot make a job"},
    },
)
async def run_schedule_now(
    schedule_id: ScheduleId,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    store: SchedulesDep,
    key: RunKey = None,
) -> ScheduleRun:
    await may_manage(schedule_id, identity, store)
    return await scheduler.run_schedule(schedule_id, key or str(uuid.uuid4()), identity)


@router.post("/{scheduleId}/pause", summary="Stop firing (idempotent)")
async def pause_schedule(
    schedule_id: ScheduleId,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    store: SchedulesDep,
) -> ScheduleView:
    await may_manage(schedule_id, identity, store)
    return await scheduler.set_paused(schedule_id, identity, paused=True)


@router.post(
    "/{scheduleId}/resume",
    summary="Fire again from the next fire time after now (missed times are not replayed)",
)
async def resume_schedule(
    schedule_id: ScheduleId,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    store: SchedulesDep,
) -> ScheduleView:
    await may_manage(schedule_id, identity, store)
    return await scheduler.set_paused(schedule_id, identity, paused=False)


@router.delete("/{scheduleId}", status_code=204, summary="Delete a schedule and its fire log")
async def delete_schedule(
    schedule_id: ScheduleId,
    identity: CurrentIdentity,
    scheduler: SchedulerDep,
    store: SchedulesDep,
) -> Response:
    await may_manage(schedule_id, identity, store)
    await scheduler.delete_schedule(schedule_id, identity)
    return Response(status_code=204)
