"""The charts over a chosen range and the overview's figures of now (issue 35, points 1 and 4;
docs/dashboard.md, "Charts"): ``GET /api/jobs/analytics/charts`` sums the chart rollups per
window of the range (means of the sampled minutes for depths, the longest wait, finishes
counted, the unclosed minutes' finishes from ``jobs``), scoped to the caller's projects or one
queue, with the workers' slots and the RabbitMQ link for admins only;
``GET /api/jobs/analytics/now`` counts the unfinished jobs now and the workers' slots."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.jobstore import (
    CHART_PLATFORM,
    queue_hours,
    queue_minutes,
    queue_sample_hours,
    queue_sample_minutes,
    queues,
    workers,
)
from jobs_common.tenancy import OrgRole
from jobs_dashboard.settings import Settings

from .conftest import ADMIN, JobFactory, headers

pytestmark = pytest.mark.integration

TEAM, OTHER = uuid.uuid4(), uuid.uuid4()
VIEWER = headers(
    Identity(
        user_id="v", email="viewer@team.test", role="user", grants=((str(TEAM), OrgRole.VIEWER),)
    )
)
PLATFORM = uuid.UUID(CHART_PLATFORM)
GRAFANA = "http://grafana.test/d/platform"
RABBIT = "http://rabbit.test/"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"grafana_url": GRAFANA, "rabbitmq_console_url": RABBIT})


async def db_minute(engine: AsyncEngine) -> datetime:
    """This minute on the database's clock, clear of its end (the request that follows reads
    the same windows)."""
    second = datetime.now(UTC).second
    if second > 54:
        await asyncio.sleep(61 - second)
    async with engine.connect() as connection:
        minute: datetime = await connection.scalar(text("SELECT date_trunc('minute', now())"))
    return minute


def figures(
    minute: datetime, project: uuid.UUID, queue: str, priority: int, **values: Any
) -> dict[str, Any]:
    row = {"waiting": 0, "running": 0, "oldest_wait_seconds": 0.0}
    row |= {"succeeded": 0, "dead": 0, "cancelled": 0}
    return {
        "minute": minute,
        "project_id": project,
        "queue": queue,
        "priority": priority,
        **row,
        **values,
    }


def with_totals(rows: list[dict[str, Any]], time: str = "minute") -> list[dict[str, Any]]:
    """The queues' rows and the totals the scheduler writes beside them: each project's
    (queue ``*``) and the platform's."""
    totals: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        for project in (row["project_id"], PLATFORM):
            key = (row[time], project, row["priority"])
            total = totals.setdefault(
                key,
                {**row, "project_id": project, "queue": "*"}
                | {m: 0 for m in ("waiting", "running", "succeeded", "dead", "cancelled")}
                | {"oldest_wait_seconds": 0.0},
            )
            for measure in ("waiting", "running", "succeeded", "dead", "cancelled"):
                total[measure] += row[measure]
            total["oldest_wait_seconds"] = max(
                total["oldest_wait_seconds"], row["oldest_wait_seconds"]
            )
    return rows + list(totals.values())


async def seed_minutes(engine: AsyncEngine, now: datetime) -> None:
    first, second = now - timedelta(minutes=3), now - timedelta(minutes=2)
    async with engine.begin() as connection:
        await connection.execute(
            insert(queue_sample_minutes),
            [
                {"minute": first, "workers": 2, "busy_slots": 3, "slots": 8},
                {"minute": second, "workers": 2, "busy_slots": 8, "slots": 8},
            ],
        )
        await connection.execute(
            insert(queue_minutes),
            with_totals([
                figures(first, TEAM, "emails", 3, waiting=4, running=2, oldest_wait_seconds=30.0,
                        succeeded=5, dead=2),
                figures(first, TEAM, "reports", 1, waiting=2, oldest_wait_seconds=90.0,
                        cancelled=1),
                figures(first, OTHER, "default", 2, waiting=10, running=1, succeeded=7),
            ]),
        )  # fmt: skip


def point(body: dict[str, Any], at: datetime) -> dict[str, Any]:
    found: dict[str, Any] = next(
        p for p in body["points"] if datetime.fromisoformat(p["start"]) == at
    )
    return found


async def test_an_admin_s_15_minutes_per_minute_with_workers_and_links(
    client: httpx.AsyncClient, store_engine: AsyncEngine, job_factory: JobFactory
) -> None:
    now = await db_minute(store_engine)
    await seed_minutes(store_engine, now)
    # finished after the newest sampled minute: no sample closed it, counted from jobs
    await job_factory.job(project_id=TEAM, status="dead", finished_at=now + timedelta(seconds=1))

    answer = await client.get(
        "/api/jobs/analytics/charts", params={"range": "15m"}, headers=headers(ADMIN)
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["range"], body["bucketSeconds"], len(body["points"])) == ("15m", 60, 15)
    assert datetime.fromisoformat(body["first"]) == now - timedelta(minutes=14)
    assert (body["grafanaUrl"], body["rabbitmqConsoleUrl"]) == (GRAFANA, RABBIT)

    sampled = point(body, now - timedelta(minutes=3))
    assert sampled["waiting"] == {"high": 4, "medium": 10, "low": 2}
    assert sampled["running"] == 3
    assert sampled["longestWaitSeconds"] == {"high": 30, "medium": 0, "low": 90}
    assert (sampled["succeeded"], sampled["dead"], sampled["cancelled"]) == (12, 2, 1)
    assert (sampled["busySlots"], sampled["slots"]) == (3, 8)
    quiet = point(body, now - timedelta(minutes=2))  # sampled, nothing unfinished
    assert quiet["waiting"] == {"high": 0, "medium": 0, "low": 0}
    assert (quiet["busySlots"], quiet["slots"]) == (8, 8)
    unsampled = point(body, now - timedelta(minutes=5))
    assert (unsampled["waiting"], unsampled["running"], unsampled["busySlots"]) == (
        None,
        None,
        None,
    )
    assert point(body, now)["dead"] == 1


async def test_a_viewer_reads_its_projects_and_one_queue_without_the_fleet(
    client: httpx.AsyncClient, store_engine: AsyncEngine, job_factory: JobFactory
) -> None:
    now = await db_minute(store_engine)
    await seed_minutes(store_engine, now)
    emails = uuid.uuid4()
    await job_factory.insert(queues, id=emails, project_id=TEAM, name="emails", created_by="t")

    mine = (await client.get("/api/jobs/analytics/charts", headers=VIEWER)).json()
    assert (mine["range"], len(mine["points"])) == ("1h", 60)
    sampled = point(mine, now - timedelta(minutes=3))
    assert sampled["waiting"] == {"high": 4, "medium": 0, "low": 2}
    assert (sampled["succeeded"], sampled["busySlots"], sampled["slots"]) == (5, None, None)
    assert (mine["grafanaUrl"], mine["rabbitmqConsoleUrl"]) == (GRAFANA, None)

    one = await client.get(
        "/api/jobs/analytics/charts",
        params={"range": "6h", "queueId": str(emails)},
        headers=VIEWER,
    )
    assert one.status_code == 200, one.text
    body = one.json()
    assert (body["bucketSeconds"], len(body["points"])) == (300, 72)
    assert (body["queue"], body["projectId"]) == ("emails", str(TEAM))
    window = now - timedelta(minutes=3)
    window -= timedelta(minutes=window.minute % 5)
    # the mean over the window's sampled minutes: 4 waiting at now-3, 0 at now-2 when that
    # minute falls in the same window
    sampled = 2 if now - timedelta(minutes=2) < window + timedelta(minutes=5) else 1
    assert point(body, window)["waiting"] == {"high": 4 / sampled, "medium": 0, "low": 0}

    theirs = uuid.uuid4()
    await job_factory.insert(queues, id=theirs, project_id=OTHER, name="default", created_by="t")
    hidden = await client.get(
        "/api/jobs/analytics/charts", params={"queueId": str(theirs)}, headers=VIEWER
    )
    assert hidden.status_code == 404
    assert hidden.json()["error"] == "not_found"
    wrong = await client.get("/api/jobs/analytics/charts", params={"range": "2h"}, headers=VIEWER)
    assert wrong.status_code == 422
    assert wrong.json()["details"][0]["field"] == "range"


async def test_seven_days_read_the_summed_hours_then_the_minutes_after_them(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    now = await db_minute(store_engine)
    hour = now.replace(minute=0) - timedelta(hours=2)
    async with store_engine.begin() as connection:
        await connection.execute(
            insert(queue_sample_hours),
            [
                {"hour": hour, "minutes": 60, "worker_minutes": 60, "workers": 120,
                 "busy_slots": 240, "slots": 480},
                {"hour": hour + timedelta(hours=1), "minutes": 0, "worker_minutes": 0,
                 "workers": 0, "busy_slots": 0, "slots": 0},
            ],
        )  # fmt: skip
        await connection.execute(
            insert(queue_hours),
            [
                {k: v for k, v in row.items() if k != "minute"}
                for row in with_totals([
                    {**figures(hour, TEAM, "emails", 3, waiting=120, oldest_wait_seconds=600.0,
                               succeeded=1000, dead=10), "hour": hour},
                ], time="hour")
            ],
        )  # fmt: skip
    await seed_minutes(store_engine, now)

    body = (
        await client.get(
            "/api/jobs/analytics/charts", params={"range": "7d"}, headers=headers(ADMIN)
        )
    ).json()
    assert (body["bucketSeconds"], len(body["points"])) == (3600, 168)
    summed = point(body, hour)
    assert summed["waiting"] == {"high": 2, "medium": 0, "low": 0}
    assert (summed["succeeded"], summed["dead"], summed["longestWaitSeconds"]["high"]) == (
        1000,
        10,
        600,
    )
    assert (summed["busySlots"], summed["slots"]) == (4, 8)
    assert point(body, hour + timedelta(hours=1))["waiting"] is None  # nobody sampled it
    this_hour = point(body, now.replace(minute=0))
    if now.minute >= 3:  # the seeded minutes fall in this hour
        assert this_hour["succeeded"] == 12


async def test_the_figures_of_now_count_unfinished_jobs_and_the_workers_slots(
    client: httpx.AsyncClient, job_factory: JobFactory
) -> None:
    for status in ("queued", "queued", "running", "running", "running", "succeeded"):
        await job_factory.job(project_id=TEAM, status=status)
    await job_factory.job(project_id=OTHER, status="running")
    seen = datetime.now(UTC)
    for worker_id, active in (("w-1", 3), ("w-2", 1)):
        await job_factory.insert(
            workers,
            id=worker_id,
            hostname="h",
            pid=1,
            version="1",
            queues=["default"],
            concurrency=4,
            active_jobs=active,
            started_at=seen,
            last_heartbeat_at=seen,
        )

    admin = (await client.get("/api/jobs/analytics/now", headers=headers(ADMIN))).json()
    assert admin["unfinishedByStatus"]["running"] == 4
    assert admin["unfinishedByStatus"]["queued"] == 2
    assert admin["unfinishedByStatus"]["pending"] == 0
    assert "succeeded" not in admin["unfinishedByStatus"]
    assert admin["workers"] == {"live": 2, "busySlots": 4, "slots": 8}

    viewer = (await client.get("/api/jobs/analytics/now", headers=VIEWER)).json()
    assert viewer["unfinishedByStatus"]["running"] == 3
    assert viewer["workers"] is None
