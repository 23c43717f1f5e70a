"""Schedule commands between the dashboard and the scheduler, which owns ``schedules``.

The dashboard checks what a user asked (the cron expression, the job template against its
type, the email rules) and sends the scheduler's internal API
(``/internal/v1/schedules``, docs/architecture.md) a :class:`NewSchedule` to create (or, at
``/by-name``, to create or update by name), or a pause, resume or delete of one schedule id,
with the caller's identity headers; an edit (:class:`ScheduleEdit`) or a run now of one schedule
id. The scheduler decides what depends on the rows (the name
taken: 409; the owner's caps: 429; not the caller's or gone: 404) in the transaction that
writes them, and answers with a :class:`ScheduleView`."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from jobs_common.api_models import CamelModel

SCHEDULES_PATH = "/internal/v1/schedules"
UPSERT_PATH = f"{SCHEDULES_PATH}/by-name"  # PUT: create (201) or update (200) by name
# The owner of a schedule declared in code (docs/sdk.md, "Schedules in code"): the submitter
# of the jobs it fires; no person's, so no person's caps count it.
CODE_OWNER = "code"


class ScheduleCaps(CamelModel):
    """How many schedules one owner may have (0: no cap), and of them how many make email
    jobs (each fire sends mail: a schedule multiplies whatever the email quota lets
    through). The dashboard's settings; counted by the scheduler when it creates one."""

    max_schedules: int = Field(ge=0)
    max_email_schedules: int = Field(ge=0)


class NewSchedule(CamelModel):
    """A schedule to create for the caller, already checked by the dashboard."""

    name: str = Field(min_length=1, max_length=200)
    cron: str
    timezone: str
    job_template: dict[str, Any]
    caps: ScheduleCaps | None = Field(default=None, description="None: the caller is exempt.")


class ScheduleEdit(CamelModel):
    """An edit of one schedule (``PUT {SCHEDULES_PATH}/{id}``), checked by the dashboard: its
    cron, time zone and job template are replaced; its name, owner, pause and fires stay."""

    cron: str
    timezone: str
    job_template: dict[str, Any]
    caps: ScheduleCaps | None = Field(default=None, description="None: the caller is exempt.")


class RunNow(CamelModel):
    """A run now's request: ``key``, the caller's Idempotency-Key (the dashboard makes one
    when the caller sends none), names the run."""

    key: str = Field(min_length=1, max_length=200)


class ScheduleRun(CamelModel):
    """A run now (``POST {SCHEDULES_PATH}/{id}/run``): the job it made, recorded as a fire of
    the schedule at ``fireTime``; ``replayed`` when the same Idempotency-Key ran it before."""

    schedule_id: uuid.UUID
    job_id: uuid.UUID
    fire_time: datetime
    replayed: bool


def schedule_path(schedule_id: uuid.UUID) -> str:
    return f"{SCHEDULES_PATH}/{schedule_id}"


class ScheduleView(CamelModel):
    id: uuid.UUID
    name: str
    cron: str
    timezone: str
    job_template: dict[str, Any]
    owner: str
    project_id: uuid.UUID = Field(description="The project the schedule and its jobs belong to.")
    paused: bool
    next_fire_at: datetime | None = Field(description="UTC; null while paused.")
    last_fire_at: datetime | None
    last_job_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime
    declared_in: str | None = Field(
        default=None,
        description="The module of the handler that declares it in code; null: made through "
        "the API.",
    )
    declared_at: datetime | None = Field(
        default=None,
        description="When code last created or changed it; null: made through the API.",
    )
