"""Schedules by name: the API's create-or-update (``PUT /internal/v1/schedules/by-name``) and
the schedules workers declare in code (``WorkerSchedules`` on ``jobs.schedules``), on the
real app, a real job store and a real broker. One row per project and name whatever the
races; an update keeps the schedule's id, owner and pause; a re-announcement writes
nothing."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.auth import Identity
from jobs_common.contracts import DeclaredSchedule, WorkerSchedules, utcnow
from jobs_common.jobstore import schedules
from jobs_common.rabbit import RabbitBus
from jobs_common.tenancy import personal_project_id
from jobs_testing.waiting import eventually

from .conftest import as_

pytestmark = pytest.mark.integration

USER = Identity(user_id="u-1", email="user@test.com", role="user")
PROJECT = personal_project_id(USER.email)
UPSERT = "/internal/v1/schedules/by-name"


def body(name: str = "nightly", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "cron": "0 3 * * *",
        "timezone": "Europe/Berlin",
        "jobTemplate": {"type": "simulate", "payload": {"n": 1}, "priority": 2},
        **fields,
    }


async def rows(db: AsyncEngine, name: str, project: uuid.UUID = PROJECT) -> list[Any]:
    async with db.connect() as connection:
        result = await connection.execute(
            select(schedules).where(schedules.c.project_id == project, schedules.c.name == name)
        )
        return list(result.all())


async def test_upsert_creates_then_updates_in_place_and_a_pause_survives(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    created = await api.put(UPSERT, json=body(), headers=as_(USER))
    assert created.status_code == 201, created.text
    first = created.json()
    assert (first["declaredIn"], first["declaredAt"]) == (None, None)

    same = await api.put(UPSERT, json=body(), headers=as_(USER))
    assert same.status_code == 200
    assert same.json() == first  # nothing written

    moved = await api.put(
        UPSERT,
        json=body(
            cron="30 4 * * *", jobTemplate={"type": "simulate", "payload": {"n": 2}, "priority": 3}
        ),
        headers=as_(USER),
    )
    assert moved.status_code == 200, moved.text
    view = moved.json()
    assert view["id"] == first["id"]
    assert (view["cron"], view["jobTemplate"]["payload"]) == ("30 4 * * *", {"n": 2})
    assert view["nextFireAt"] != first["nextFireAt"]

    paused = await api.post(f"/internal/v1/schedules/{first['id']}/pause", headers=as_(USER))
    assert paused.json()["paused"] is True
    again = await api.put(UPSERT, json=body(cron="15 1 * * *"), headers=as_(USER))
    assert again.status_code == 200
    assert (again.json()["paused"], again.json()["nextFireAt"], again.json()["cron"]) == (
        True,
        None,
        "15 1 * * *",
    )
    assert len(await rows(db, "nightly")) == 1


async def test_two_upserts_racing_on_a_name_leave_one_row(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    answers = await asyncio.gather(
        *(
            api.put(UPSERT, json=body("raced", cron=f"{m} 3 * * *"), headers=as_(USER))
            for m in range(8)
        )
    )
    assert sorted(a.status_code for a in answers) == [200] * 7 + [201]
    assert len({a.json()["id"] for a in answers}) == 1
    assert len(await rows(db, "raced")) == 1


def declared(name: str = "nightly-report", **fields: Any) -> DeclaredSchedule:
    values: dict[str, Any] = {
        "name": name,
        "cron": "0 3 * * *",
        "timezone": "UTC",
        "job_type": "acme.report",
        "payload": {"day": "yesterday"},
        "max_attempts": 3,
        "timeout_seconds": 60,
        "declared_in": "acme_jobs.reports",
        **fields,
    }
    return DeclaredSchedule(**values)


def announcement(worker: str, *items: DeclaredSchedule) -> WorkerSchedules:
    return WorkerSchedules(
        worker_id=worker, project_id=PROJECT, schedules=list(items), sent_at=utcnow()
    )


async def test_declared_schedules_are_created_once_updated_in_place_and_refused_when_unusable(
    bus: RabbitBus, db: AsyncEngine, api: httpx.AsyncClient
) -> None:
    """Two workers announce the same declaration: one row, owned by ``code``, marked with the
    module; announced again unchanged, nothing is written; a changed cron moves it; a
    declaration with an unusable time zone is skipped and the others applied; the API may
    not change it (409)."""
    await bus.publisher.publish(topology.SCHEDULES, announcement("w-1", declared()))
    await bus.publisher.publish(topology.SCHEDULES, announcement("w-2", declared()))
    [row] = await eventually(lambda: rows(db, "nightly-report"), what="the declared schedule")
    assert (row.owner, row.declared_in, row.cron, row.paused) == (
        "code",
        "acme_jobs.reports",
        "0 3 * * *",
        False,
    )
    assert row.declared_at is not None and row.next_fire_at is not None
    assert row.job_template["priorityDefault"] is True
    assert row.job_template["payload"] == {"day": "yesterday"}

    # The marker: an unusable declaration beside a new one, then the same one again.
    await bus.publisher.publish(
        topology.SCHEDULES,
        announcement(
            "w-1", declared(), declared("broken", timezone="Mars/Base"), declared("weekly")
        ),
    )
    await eventually(lambda: rows(db, "weekly"), what="the second declared schedule")
    assert await rows(db, "broken") == []
    [unchanged] = await rows(db, "nightly-report")
    assert (unchanged.updated_at, unchanged.declared_at) == (row.updated_at, row.declared_at)

    await bus.publisher.publish(
        topology.SCHEDULES, announcement("w-2", declared(cron="0 5 * * *", priority=3))
    )

    async def moved() -> Any:
        [current] = await rows(db, "nightly-report")
        return current if current.cron == "0 5 * * *" else None

    updated = await eventually(moved, what="the declaration's new cron")
    assert updated.id == row.id
    assert updated.next_fire_at != row.next_fire_at
    assert updated.job_template["priority"] == 3
    assert "priorityDefault" not in updated.job_template

    refused = await api.put(UPSERT, json=body("nightly-report"), headers=as_(USER))
    assert refused.status_code == 409
    assert refused.json()["details"] == [
        {"field": "name", "message": "declared in code by acme_jobs.reports"}
    ]
    [kept] = await rows(db, "nightly-report")
    assert kept.cron == "0 5 * * *"


async def test_a_declaration_takes_over_a_schedule_made_through_the_api_keeping_its_pause(
    bus: RabbitBus, db: AsyncEngine, api: httpx.AsyncClient
) -> None:
    made = await api.put(UPSERT, json=body("nightly-report"), headers=as_(USER))
    schedule_id = made.json()["id"]
    await api.post(f"/internal/v1/schedules/{schedule_id}/pause", headers=as_(USER))
    await bus.publisher.publish(topology.SCHEDULES, announcement("w-1", declared()))

    async def taken() -> Any:
        [current] = await rows(db, "nightly-report")
        return current if current.declared_in else None

    row = await eventually(taken, what="the declaration to take the schedule over")
    assert (str(row.id), row.owner, row.paused, row.next_fire_at) == (
        schedule_id,
        USER.email,
        True,
        None,
    )
