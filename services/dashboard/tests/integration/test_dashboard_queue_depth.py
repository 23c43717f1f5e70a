"""A queue's depth by state and priority and its last hour (issue 33, point 5;
docs/flow-control.md, "Depth and the last hour"): ``GET /api/queues`` and ``/{queueId}`` give
each queue's unfinished jobs by status and priority, in the lifecycle's order and high
priority first; ``GET /api/queues/history`` gives the listing page's queues per minute, oldest
first, zeros for a minute sampled without the queue and null for one nobody sampled, scoped
like the listing (a project the caller does not see: 404)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.jobstore import queue_sample_minutes, queue_samples, queues
from jobs_common.tenancy import OrgRole

from .conftest import ADMIN, BASE_TIME, JobFactory, headers

pytestmark = pytest.mark.integration

TEAM, OTHER = uuid.uuid4(), uuid.uuid4()
VIEWER = headers(
    Identity(
        user_id="v", email="viewer@team.test", role="user", grants=((str(TEAM), OrgRole.VIEWER),)
    )
)


async def make_queue(factory: JobFactory, project: uuid.UUID, name: str) -> uuid.UUID:
    queue_id = uuid.uuid4()
    await factory.insert(queues, id=queue_id, project_id=project, name=name, created_by="test")
    return queue_id


async def test_a_queue_s_unfinished_jobs_by_status_and_priority(
    client: httpx.AsyncClient, job_factory: JobFactory
) -> None:
    emails = await make_queue(job_factory, TEAM, "emails")
    await make_queue(job_factory, TEAM, "idle")
    oldest = BASE_TIME - timedelta(hours=1)
    await job_factory.job(
        project_id=TEAM, queue="emails", status="scheduled", priority=2, created_at=oldest
    )  # older, but not ready to run: not the oldest queued one
    for status, priority in [
        ("queued", 1),
        ("queued", 3),
        ("queued", 3),
        ("running", 3),
        ("scheduled", 2),
        ("failed", 2),
        ("blocked", 1),
        ("pending", 2),
        ("succeeded", 3),  # finished: not counted
        ("dead", 1),
    ]:
        await job_factory.job(project_id=TEAM, queue="emails", status=status, priority=priority)
    await job_factory.job(project_id=TEAM, queue="idle", status="cancelled")

    listed = await client.get("/api/queues", params={"projectId": str(TEAM)}, headers=VIEWER)
    assert listed.status_code == 200, listed.text
    by_name = {q["name"]: q for q in listed.json()["items"]}
    expected = [
        {"status": "pending", "priority": 2, "count": 1},
        {"status": "blocked", "priority": 1, "count": 1},
        {"status": "scheduled", "priority": 2, "count": 2},
        {"status": "queued", "priority": 3, "count": 2},
        {"status": "queued", "priority": 1, "count": 1},
        {"status": "running", "priority": 3, "count": 1},
        {"status": "failed", "priority": 2, "count": 1},
    ]
    assert by_name["emails"]["depth"] == expected
    assert (by_name["emails"]["waiting"], by_name["emails"]["running"]) == (8, 1)
    assert (by_name["idle"]["depth"], by_name["idle"]["waiting"]) == ([], 0)
    # The oldest job ready to run: the first queued one (the factory's jobs a minute apart).
    first_queued = BASE_TIME + timedelta(minutes=2)
    emails_view = by_name["emails"]
    assert datetime.fromisoformat(emails_view["oldestQueuedAt"]) == first_queued
    async with job_factory.engine.connect() as connection:
        now = (await connection.execute(select(func.now()))).scalar_one()
    assert emails_view["oldestAgeSeconds"] == pytest.approx(
        (now - first_queued).total_seconds(), abs=60
    )
    assert (by_name["idle"]["oldestQueuedAt"], by_name["idle"]["oldestAgeSeconds"]) == (None, None)

    one = await client.get(f"/api/queues/{emails}", headers=VIEWER)
    assert one.json()["depth"] == expected
    assert one.json()["oldestQueuedAt"] == emails_view["oldestQueuedAt"]


async def db_minute(engine: AsyncEngine) -> datetime:
    async with engine.connect() as connection:
        minute: datetime = await connection.scalar(text("SELECT date_trunc('minute', now())"))
    return minute


async def test_the_last_hour_of_a_page_of_queues_per_minute(
    client: httpx.AsyncClient, job_factory: JobFactory, store_engine: AsyncEngine
) -> None:
    emails = await make_queue(job_factory, TEAM, "emails")
    idle = await make_queue(job_factory, TEAM, "idle")
    await make_queue(job_factory, OTHER, "reports")
    now = await db_minute(store_engine)
    ago = {n: now - timedelta(minutes=n) for n in range(10)}
    async with store_engine.begin() as connection:
        # sampled: 3 and 2 minutes ago, and an hour and a half ago (outside the window)
        minutes = [ago[3], ago[2], now - timedelta(minutes=90)]
        await connection.execute(insert(queue_sample_minutes), [{"minute": m} for m in minutes])
        await connection.execute(
            insert(queue_samples),
            [
                {
                    "project_id": TEAM,
                    "queue": "emails",
                    "minute": ago[3],
                    "waiting": 5,
                    "running": 2,
                },
                {
                    "project_id": TEAM,
                    "queue": "emails",
                    "minute": minutes[2],
                    "waiting": 9,
                    "running": 9,
                },
                {
                    "project_id": OTHER,
                    "queue": "reports",
                    "minute": ago[3],
                    "waiting": 7,
                    "running": 0,
                },
            ],
        )

    answer = await client.get("/api/queues/history", params={"minutes": 5}, headers=VIEWER)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["minutes"], body["totalItems"], body["pageNumber"]) == (5, 2, 1)
    first = datetime.fromisoformat(body["firstMinute"])
    assert first in (ago[4], ago[3])  # ago[3] when the minute turned since

    def expected(values: dict[datetime, int]) -> list[int | None]:
        minutes = [first + timedelta(minutes=i) for i in range(5)]
        return [values.get(m, 0 if m in (ago[3], ago[2]) else None) for m in minutes]

    items = {i["name"]: i for i in body["items"]}
    assert set(items) == {"emails", "idle"}  # not the other project's
    assert (items["emails"]["queueId"], items["idle"]["queueId"]) == (str(emails), str(idle))
    assert items["emails"]["projectId"] == str(TEAM)
    assert items["emails"]["waiting"] == expected({ago[3]: 5})
    assert items["emails"]["running"] == expected({ago[3]: 2})
    assert items["idle"]["waiting"] == expected({})
    assert len(items["idle"]["running"]) == 5

    # one page of the listing, as GET /api/queues pages it; one project; the default hour
    paged = await client.get(
        "/api/queues/history", params={"pageSize": 1, "pageNumber": 2}, headers=VIEWER
    )
    assert [i["name"] for i in paged.json()["items"]] == ["idle"]
    hour = await client.get("/api/queues/history", params={"projectId": str(TEAM)}, headers=VIEWER)
    assert hour.json()["minutes"] == 60
    assert all(len(i["waiting"]) == 60 for i in hour.json()["items"])
    everyone = await client.get("/api/queues/history", headers=headers(ADMIN))
    assert {i["name"] for i in everyone.json()["items"]} == {"emails", "idle", "reports"}


@pytest.mark.parametrize(
    ("params", "status", "error"),
    [
        ({"projectId": str(OTHER)}, 404, "not_found"),
        ({"minutes": 0}, 422, "validation_error"),
        ({"minutes": 1441}, 422, "validation_error"),
    ],
)
async def test_another_project_or_a_bad_range_is_refused(
    client: httpx.AsyncClient, params: dict[str, Any], status: int, error: str
) -> None:
    answer = await client.get("/api/queues/history", params=params, headers=VIEWER)
    assert (answer.status_code, answer.json()["error"]) == (status, error), answer.text
