"""``PUT /api/schedules/{id}`` (edit: checked like a create, 422/403/409 change nothing) and
``POST /api/schedules/{id}/run`` (run now: one job from the template, recorded as a fire,
once per Idempotency-Key, the next fire time untouched), decided by the scheduler's real
internal API on this test's job store."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import jobs, schedule_fires, schedules
from jobs_common.tenancy import personal_project_id

pytestmark = pytest.mark.integration

TEMPLATE = {
    "type": "email",
    "priority": 3,
    "payload": {"to": "a@example.com", "subject": "report", "body": "daily"},
}


def body(**overrides: Any) -> dict[str, Any]:
    return {
        "cron": "0 7 * * *",
        "timezone": "America/New_York",
        "jobTemplate": TEMPLATE,
        **overrides,
    }


async def row_of(engine: AsyncEngine, schedule_id: uuid.UUID) -> Any:
    async with engine.connect() as connection:
        return (
            await connection.execute(select(schedules).where(schedules.c.id == schedule_id))
        ).one()


@pytest.mark.registry  # payload checks
async def test_an_edit_replaces_cron_zone_and_template_and_keeps_the_rest(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    created = await client.post(
        "/api/schedules", json={"name": "report", **body()}, headers=auth.user
    )
    assert created.status_code == 201, created.text
    schedule_id = uuid.UUID(created.json()["id"])
    path = f"/api/schedules/{schedule_id}"

    edited_template = {
        **TEMPLATE,
        "priority": 1,
        "payload": {"to": "b@example.com", "subject": "weekly", "body": "sums"},
        "maxAttempts": 5,
        "retryPolicy": {"strategy": "fixed", "baseDelayMs": 2000},
    }
    answer = await client.put(
        path,
        json=body(cron="30 8 * * 1", timezone="Europe/Berlin", jobTemplate=edited_template),
        headers=auth.user,
    )
    assert answer.status_code == 200, answer.text
    view = answer.json()
    assert (view["id"], view["name"], view["owner"]) == (
        str(schedule_id),
        "report",
        auth.user_email,
    )
    assert (view["cron"], view["timezone"]) == ("30 8 * * 1", "Europe/Berlin")
    assert view["jobTemplate"]["payload"]["to"] == "b@example.com"
    assert (view["jobTemplate"]["priority"], view["jobTemplate"]["maxAttempts"]) == (1, 5)
    assert view["jobTemplate"]["retryPolicy"] == {"strategy": "fixed", "baseDelayMs": 2000}
    fire = datetime.fromisoformat(view["nextFireAt"]).astimezone(UTC)
    assert (fire.weekday(), fire.minute) == (0, 30)  # Mondays 08:30 Berlin
    stored = await row_of(store_engine, schedule_id)

    # Refused edits change nothing: a bad cron (422), a member (403), unknown or not seen (404).
    bad = await client.put(path, json=body(cron="61 * * * *"), headers=auth.user)
    assert bad.status_code == 422, bad.text
    assert bad.json()["details"][0]["field"] == "cron"
    wrong_payload = await client.put(
        path, json=body(jobTemplate={**TEMPLATE, "payload": {"to": "x"}}), headers=auth.user
    )
    assert wrong_payload.status_code == 422, wrong_payload.text
    assert {d["field"] for d in wrong_payload.json()["details"]} >= {"jobTemplate.payload.to"}
    assert (await client.put(path, json=body(), headers=auth.other)).status_code == 404
    unknown = f"/api/schedules/{uuid.uuid4()}"
    assert (await client.put(unknown, json=body(), headers=auth.user)).status_code == 404
    assert await row_of(store_engine, schedule_id) == stored

    # Declared in code: refused with the module named, so the operator knows where to edit.
    async with store_engine.begin() as connection:
        await connection.execute(
            update(schedules)
            .where(schedules.c.id == schedule_id)
            .values(declared_in="acme.reports", declared_at=datetime.now(UTC))
        )
    declared = await client.put(path, json=body(), headers=auth.user)
    assert declared.status_code == 409, declared.text
    assert declared.json()["error"] == "conflict"
    assert "acme.reports" in declared.json()["message"]
    assert (await row_of(store_engine, schedule_id)).cron == "30 8 * * 1"


async def test_run_now_records_one_job_per_key_as_a_fire_and_keeps_the_next_fire(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    schedule_id = uuid.uuid4()
    next_fire = datetime.now(UTC) + timedelta(days=3)
    await job_factory.insert(
        schedules,
        id=schedule_id,
        name="nightly",
        cron="0 3 * * *",
        timezone="UTC",
        job_template={**TEMPLATE, "queue": "default", "maxAttempts": 4, "timeoutSeconds": 60},
        owner=auth.user_email,
        project_id=personal_project_id(auth.user_email),
        paused=True,  # a paused schedule runs now too
        next_fire_at=next_fire,
    )
    path = f"/api/schedules/{schedule_id}/run"
    first = await client.post(path, headers={**auth.user, "Idempotency-Key": "click-1"})
    assert first.status_code == 202, first.text
    run = first.json()
    assert (run["scheduleId"], run["replayed"]) == (str(schedule_id), False)
    again = await client.post(path, headers={**auth.user, "Idempotency-Key": "click-1"})
    assert again.status_code == 202, again.text
    assert (again.json()["jobId"], again.json()["replayed"]) == (run["jobId"], True)
    other = await client.post(path, headers={**auth.user, "Idempotency-Key": "click-2"})
    assert other.json()["jobId"] != run["jobId"]

    async with store_engine.connect() as connection:
        made = (
            await connection.execute(select(jobs).where(jobs.c.schedule_id == schedule_id))
        ).all()
        fires = (
            await connection.execute(
                select(schedule_fires.c.job_id).where(schedule_fires.c.schedule_id == schedule_id)
            )
        ).all()
    assert len(made) == 2
    job = next(j for j in made if str(j.id) == run["jobId"])
    assert (job.type, job.priority, job.submitted_by, job.max_attempts) == (
        "email",
        3,
        auth.user_email,
        4,
    )
    assert job.payload["subject"] == "report"
    assert job.project_id == personal_project_id(auth.user_email)
    assert {str(f.job_id) for f in fires} == {j.id.__str__() for j in made}
    row = await row_of(store_engine, schedule_id)
    assert (row.next_fire_at, row.paused, str(row.last_job_id)) == (
        next_fire,
        True,
        other.json()["jobId"],
    )
    detail = (await client.get(f"/api/schedules/{schedule_id}", headers=auth.user)).json()
    assert run["jobId"] in {f["jobId"] for f in detail["fires"]}

    assert (await client.post(path, headers=auth.other)).status_code == 404
    unknown = await client.post(f"/api/schedules/{uuid.uuid4()}/run", headers=auth.user)
    assert unknown.status_code == 404
    bad_key = await client.post(path, headers={**auth.user, "Idempotency-Key": "x" * 201})
    assert bad_key.status_code == 422
