"""Cron schedules: create, list, detail with recent fires, pause, resume, delete."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Response

from jobs_common.contracts import utcnow
from jobs_common.errors import Conflict, ErrorDetail, NotFound, ValidationFailed
from jobs_common.recipients import RecipientAllowList
from jobs_common.request_identity import CurrentIdentity
from jobs_dashboard.api.deps import (
    OwnVisibilityDep,
    PageDep,
    SchedulesDep,
    SettingsDep,
    TypesDep,
)
from jobs_dashboard.domain.payloads import check_payload
from jobs_dashboard.domain.schedules import (
    ScheduleCaps,
    ScheduleCreate,
    ScheduleDetail,
    SchedulePage,
    ScheduleView,
    refused_recipient,
    too_frequent_for_email,
)

router = APIRouter(prefix="/api/schedules", tags=["schedules"])

ScheduleId = Annotated[uuid.UUID, Path(alias="scheduleId", description="The schedule's id.")]


@router.post(
    "",
    status_code=201,
    summary="Create a cron schedule owned by the caller",
    responses={
        409: {"description": "The caller already has a schedule of that name"},
        429: {"description": "The caller has as many schedules (of email jobs) as allowed"},
    },
)
async def create_schedule(
    body: ScheduleCreate,
    identity: CurrentIdentity,
    store: SchedulesDep,
    settings: SettingsDep,
    types: TypesDep,
) -> ScheduleView:
    job = body.job_template
    checked = await check_payload(
        job.type, job.payload, prefix="jobTemplate.payload", identity=identity, types=types
    )
    template = job.stored(checked)
    allowed = RecipientAllowList.of(settings.email_allowed_recipients)
    capped = not (identity.is_admin and settings.schedule_caps_exempt_admins)
    refused = refused_recipient(template, allowed)
    if capped:
        interval = settings.min_email_schedule_interval_seconds
        refused += too_frequent_for_email(body, min_interval_seconds=interval, now=utcnow())
    if refused:
        raise ValidationFailed("request validation failed", details=refused)
    caps = ScheduleCaps(
        max_schedules=settings.max_schedules_per_user,
        max_email_schedules=settings.max_email_schedules_per_user,
    )
    view = await store.create(
        name=body.name,
        cron=body.cron,
        timezone=body.timezone,
        job_template=template,
        owner=identity.email,
        caps=caps if capped else None,
    )
    if view is None:
        raise Conflict(
            f"a schedule named {body.name!r} already exists",
            details=[ErrorDetail(field="name", message="already used by one of your schedules")],
        )
    return view


@router.get("", summary="Schedules (a user's own, an admin's all), by name")
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


@router.post("/{scheduleId}/pause", summary="Stop firing (idempotent)")
async def pause_schedule(
    schedule_id: ScheduleId, visibility: OwnVisibilityDep, store: SchedulesDep
) -> ScheduleView:
    view = await store.set_paused(schedule_id, visibility, paused=True)
    if view is None:
        raise NotFound(f"schedule {schedule_id} not found")
    return view


@router.post(
    "/{scheduleId}/resume",
    summary="Fire again from the next fire time after now (missed times are not replayed)",
)
async def resume_schedule(
    schedule_id: ScheduleId, visibility: OwnVisibilityDep, store: SchedulesDep
) -> ScheduleView:
    view = await store.set_paused(schedule_id, visibility, paused=False)
    if view is None:
        raise NotFound(f"schedule {schedule_id} not found")
    return view


@router.delete("/{scheduleId}", status_code=204, summary="Delete a schedule and its fire log")
async def delete_schedule(
    schedule_id: ScheduleId, visibility: OwnVisibilityDep, store: SchedulesDep
) -> Response:
    if not await store.delete(schedule_id, visibility):
        raise NotFound(f"schedule {schedule_id} not found")
    return Response(status_code=204)
