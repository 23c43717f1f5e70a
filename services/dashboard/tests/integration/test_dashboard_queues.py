"""GET /api/queue-depths: queue depth per priority from the job store (with the oldest job's age)
and from the broker (ready messages, consumers)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import aio_pika
import httpx
import pytest

from jobs_common import topology
from jobs_common.jobstore import queues

pytestmark = pytest.mark.integration


async def test_queue_depth_per_priority_from_the_store_and_the_broker(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, rabbit_url: str, app: Any
) -> None:
    base = job_factory.base_time
    for minutes, priority in ((0, 3), (5, 3), (2, 1)):
        await job_factory.job(
            status="queued", priority=priority, queued_at=base + timedelta(minutes=minutes)
        )
    await job_factory.job(status="running", priority=2, queued_at=base)  # started: not waiting
    connection = await aio_pika.connect(rabbit_url)
    try:
        channel = await connection.channel()
        exchange = await channel.get_exchange(topology.JOBS_EXCHANGE)
        await exchange.publish(aio_pika.Message(b"{}"), routing_key=topology.READY_HIGH)

        answer = await client.get("/api/queue-depths", headers=auth.user)
    finally:
        await connection.close()
    assert answer.status_code == 200, answer.text
    items = answer.json()["items"]
    assert [(q["queue"], q["priority"], q["label"]) for q in items] == [
        (topology.READY_HIGH, 3, "high"),
        (topology.READY_MEDIUM, 2, "medium"),
        (topology.READY_LOW, 1, "low"),
    ]
    high, medium, low = items
    assert (high["queuedJobs"], medium["queuedJobs"], low["queuedJobs"]) == (2, 0, 1)
    assert high["oldestQueuedAt"].startswith(base.isoformat()[:19])
    assert high["oldestAgeSeconds"] > low["oldestAgeSeconds"] > 0
    assert medium["oldestQueuedAt"] is None and medium["oldestAgeSeconds"] is None
    assert (high["brokerReady"], high["consumers"]) == (1, 0)
    assert (low["brokerReady"], low["consumers"]) == (0, 0)


async def test_without_the_broker_the_store_still_answers(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, app: Any
) -> None:
    await job_factory.job(status="queued", priority=2, queued_at=job_factory.base_time)
    await app.state.bus.connection.close()
    items = (await client.get("/api/queue-depths", headers=auth.user)).json()["items"]
    assert [q["queuedJobs"] for q in items] == [0, 1, 0]
    assert {(q["brokerReady"], q["consumers"]) for q in items} == {(None, None)}


async def test_a_named_queue_with_waiting_jobs_is_listed_after_the_default_one(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    """Jobs of a type no live worker serves wait in their named queue, and say so here."""
    await job_factory.job(
        status="queued", priority=2, queued_at=job_factory.base_time, queue="acme"
    )
    items = (await client.get("/api/queue-depths", headers=auth.user)).json()["items"]
    assert [(q["namedQueue"], q["queue"]) for q in items] == [
        ("default", topology.READY_HIGH),
        ("default", topology.READY_MEDIUM),
        ("default", topology.READY_LOW),
        ("acme", "jobs.ready.acme.high"),
        ("acme", "jobs.ready.acme.medium"),
        ("acme", "jobs.ready.acme.low"),
    ]
    acme_medium = items[4]
    assert (acme_medium["queuedJobs"], acme_medium["consumers"]) == (1, 0)  # nobody serves it
    assert [q["queuedJobs"] for q in items[:3]] == [0, 0, 0]


async def test_a_known_queue_nothing_waits_in_is_listed_with_no_consumer(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    """Issue 35: a project's queue that no worker serves is listed, waiting or not."""
    await job_factory.insert(
        queues, id=uuid.uuid4(), project_id=uuid.uuid4(), name="reports", created_by="t"
    )
    items = (await client.get("/api/queue-depths", headers=auth.user)).json()["items"]
    reports = [q for q in items if q["namedQueue"] == "reports"]
    assert [q["queue"] for q in reports] == [
        "jobs.ready.reports.high",
        "jobs.ready.reports.medium",
        "jobs.ready.reports.low",
    ]
    assert {(q["queuedJobs"], q["consumers"]) for q in reports} == {(0, 0)}
