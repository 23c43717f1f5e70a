"""Cron schedules: create (validated, nextFireAt), list, detail with fires, pause/resume, delete."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.cron import next_fire_after
from jobs_common.jobstore import schedule_fires, schedules

pytestmark = [pytest.mark.integration, pytest.mark.registry]  # payload checks


def schedule_body(**overrides: Any) -> dict[str, Any]:
    template = {
        "type": "email",
        "priority": 3,
        "payload": {"to": "a@example.com", "subject": "report", "body": "daily"},
    }
    template.update(overrides.pop("jobTemplate", {}))
    return {
        "name": "daily-report",
        "cron": "0 7 * * *",
        "timezone": "America/New_York",
        "jobTemplate": template,
        **overrides,
    }


async def create(
    client: httpx.AsyncClient, headers: dict[str, str], **overrides: Any
) -> httpx.Response:
    return await client.post("/api/schedules", json=schedule_body(**overrides), headers=headers)


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value)


async def test_create_stores_the_validated_template_and_the_next_fire_time(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    before = datetime.now(UTC)
    response = await create(
        client,
        auth.user,
        jobTemplate={"maxAttempts": 2, "timeoutSeconds": 30, "retryPolicy": {"strategy": "fixed"}},
    )
    after = datetime.now(UTC)
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {
        "id",
        "name",
        "cron",
        "timezone",
        "jobTemplate",
        "owner",
        "projectId",
        "paused",
        "nextFireAt",
        "lastFireAt",
        "lastJobId",
        "createdAt",
        "updatedAt",
        "declaredIn",
        "declaredAt",
    }
    assert (body["name"], body["cron"], body["timezone"], body["owner"], body["paused"]) == (
        "daily-report",
        "0 7 * * *",
        "America/New_York",
        auth.user_email,
        False,
    )
    assert body["jobTemplate"] == {
        "type": "email",
        "priority": 3,
        "payload": {"to": "a@example.com", "subject": "report", "body": "daily"},
        "queue": "default",
        "maxAttempts": 2,
        "timeoutSeconds": 30,
        "retryPolicy": {"strategy": "fixed"},
        "retryPolicyName": None,
    }
    fire = parse(body["nextFireAt"])
    assert fire.utcoffset() == timedelta(0)
    assert fire in {
        next_fire_after("0 7 * * *", "America/New_York", before),
        next_fire_after("0 7 * * *", "America/New_York", after),
    }
    assert before < fire <= before + timedelta(days=1)
    async with store_engine.connect() as connection:
        row = (await connection.execute(select(schedules))).one()
    assert row.next_fire_at == fire
    assert row.job_template == body["jobTemplate"]
    assert (body["lastFireAt"], body["lastJobId"]) == (None, None)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"cron": "0 7 * *"}, "cron"),
        ({"cron": "0 0 7 * * *"}, "cron"),
        ({"cron": "0 25 * * *"}, "cron"),
        ({"timezone": "Europe/Atlantis"}, "timezone"),
        ({"timezone": "+02:00"}, "timezone"),
        ({"jobTemplate": {"type": ""}}, "jobTemplate.type"),
        ({"jobTemplate": {"priority": 0}}, "jobTemplate.priority"),
        ({"jobTemplate": {"payload": {"to": "x"}}}, "jobTemplate.payload.to"),
        ({"jobTemplate": {"payload": {"to": "x@y.z"}}}, "jobTemplate.payload.subject"),
        ({"jobTemplate": {"maxAttempts": 99}}, "jobTemplate.maxAttempts"),
        ({"name": ""}, "name"),
    ],
)
async def test_invalid_schedules_are_422_with_field_paths(
    client: httpx.AsyncClient,
    auth: Any,
    store_engine: AsyncEngine,
    overrides: dict[str, Any],
    field: str,
) -> None:
    response = await create(client, auth.user, **overrides)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "validation_error"
    assert field in [d["field"] for d in body["details"]]
    async with store_engine.connect() as connection:
        assert (await connection.execute(select(schedules))).first() is None


async def test_a_custom_type_while_the_registry_does_not_answer_is_503_and_stores_nothing(
    registry_down: None, client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    """Every type is checked by the submission service, which owns the type registry
    (tests/e2e/test_handler_sdk_e2e.py runs that with the real one). Here nothing listens
    at DASHBOARD_SUBMISSION_URL."""
    response = await create(
        client, auth.user, jobTemplate={"type": "acme.reverse", "payload": {"text": "abc"}}
    )
    assert response.status_code == 503, response.text
    assert response.json()["error"] == "service_unavailable"
    async with store_engine.connect() as connection:
        assert (await connection.execute(select(schedules))).first() is None


async def test_names_are_unique_per_owner(client: httpx.AsyncClient, auth: Any) -> None:
    assert (await create(client, auth.user)).status_code == 201
    duplicate = await create(client, auth.user, cron="0 8 * * *")
    assert duplicate.status_code == 409
    assert duplicate.json()["error"] == "conflict"
    assert duplicate.json()["details"][0]["field"] == "name"
    assert (await create(client, auth.other)).status_code == 201


async def test_list_is_paged_and_scoped_to_the_owner(client: httpx.AsyncClient, auth: Any) -> None:
    for name in ("c", "a", "b"):
        assert (await create(client, auth.user, name=name)).status_code == 201
    assert (await create(client, auth.other, name="z")).status_code == 201
    page = (await client.get("/api/schedules", params={"pageSize": 2}, headers=auth.user)).json()
    assert [s["name"] for s in page["items"]] == ["a", "b"]
    assert (page["totalItems"], page["totalPages"], page["pageNumber"]) == (3, 2, 1)
    second = (
        await client.get(
            "/api/schedules", params={"pageSize": 2, "pageNumber": 2}, headers=auth.user
        )
    ).json()
    assert [s["name"] for s in second["items"]] == ["c"]
    everyone = (await client.get("/api/schedules", headers=auth.admin)).json()
    assert [s["name"] for s in everyone["items"]] == ["a", "b", "c", "z"]


async def test_detail_has_the_last_fires_with_job_statuses(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    schedule_id = (await create(client, auth.user)).json()["id"]
    base = job_factory.base_time
    recorded = {}
    for i in range(22):
        job_id = uuid.uuid4()
        if i % 2 == 0:  # every other fired job already recorded by the scheduler
            await job_factory.job(id=job_id, status="succeeded", schedule_id=uuid.UUID(schedule_id))
            recorded[str(job_id)] = "succeeded"
        await job_factory.insert(
            schedule_fires,
            schedule_id=uuid.UUID(schedule_id),
            fire_time=base + timedelta(days=i),
            job_id=job_id,
        )
    response = await client.get(f"/api/schedules/{schedule_id}", headers=auth.user)
    assert response.status_code == 200, response.text
    fires = response.json()["fires"]
    assert len(fires) == 20
    times = [parse(f["fireTime"]) for f in fires]
    assert times == sorted(times, reverse=True)
    assert times[0] == base + timedelta(days=21)
    assert set(fires[0]) == {"fireTime", "jobId", "firedAt", "jobStatus"}
    for fire in fires:
        assert fire["jobStatus"] == recorded.get(fire["jobId"])
    # the jobs it created are filterable
    listed = await client.get(
        "/api/jobs", params={"scheduleId": schedule_id, "pageSize": 100}, headers=auth.user
    )
    assert listed.json()["totalItems"] == 11
    assert {item["scheduleId"] for item in listed.json()["items"]} == {schedule_id}
    assert (
        await client.get(f"/api/schedules/{schedule_id}", headers=auth.other)
    ).status_code == 404
    assert (
        await client.get(f"/api/schedules/{uuid.uuid4()}", headers=auth.user)
    ).status_code == 404


async def test_pause_and_resume_skip_missed_fire_times(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    schedule_id = (await create(client, auth.user, cron="*/15 * * * *", timezone="UTC")).json()[
        "id"
    ]
    paused = await client.post(f"/api/schedules/{schedule_id}/pause", headers=auth.user)
    assert paused.status_code == 200, paused.text
    assert (paused.json()["paused"], paused.json()["nextFireAt"]) == (True, None)
    again = await client.post(f"/api/schedules/{schedule_id}/pause", headers=auth.user)
    assert again.json()["paused"] is True
    # while paused, time "passes": an old next fire must not be replayed on resume
    async with store_engine.begin() as connection:
        await connection.execute(
            update(schedules).values(next_fire_at=datetime(2020, 1, 1, tzinfo=UTC))
        )
    before = datetime.now(UTC)
    resumed = await client.post(f"/api/schedules/{schedule_id}/resume", headers=auth.user)
    assert resumed.status_code == 200
    fire = parse(resumed.json()["nextFireAt"])
    assert resumed.json()["paused"] is False
    assert before < fire <= before + timedelta(minutes=15)
    assert fire.minute % 15 == 0 and fire.second == 0
    # resuming an active schedule changes nothing
    same = await client.post(f"/api/schedules/{schedule_id}/resume", headers=auth.user)
    assert same.json()["nextFireAt"] == resumed.json()["nextFireAt"]
    hidden = await client.post(f"/api/schedules/{schedule_id}/pause", headers=auth.other)
    assert hidden.status_code == 404
    assert (
        await client.post(f"/api/schedules/{schedule_id}/pause", headers=auth.admin)
    ).status_code == 200


async def test_delete(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    schedule_id = (await create(client, auth.user)).json()["id"]
    await job_factory.insert(
        schedule_fires,
        schedule_id=uuid.UUID(schedule_id),
        fire_time=job_factory.base_time,
        job_id=uuid.uuid4(),
    )
    assert (
        await client.delete(f"/api/schedules/{schedule_id}", headers=auth.other)
    ).status_code == 404
    deleted = await client.delete(f"/api/schedules/{schedule_id}", headers=auth.user)
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert (await client.get(f"/api/schedules/{schedule_id}", headers=auth.user)).status_code == 404
    assert (
        await client.delete(f"/api/schedules/{schedule_id}", headers=auth.user)
    ).status_code == 404
