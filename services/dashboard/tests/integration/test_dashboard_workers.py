"""The Workers view's API: what each worker runs (from the job store), its counts and quiet
state (from its heartbeat), live first and ids in numeric order; an admin's quiet and stop
published to the workers' control queues, refused to everyone else."""

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aio_pika
import httpx
import pytest
from aio_pika.abc import AbstractQueue

from jobs_common.contracts import WorkerControl
from jobs_common.jobstore import read_horizons, workers
from jobs_common.topology import CONTROL_PATTERN, EVENTS_EXCHANGE, HEARTBEAT

from .conftest import next_message

pytestmark = pytest.mark.integration


async def add_worker(job_factory: Any, worker_id: str, age: timedelta, **extra: Any) -> None:
    now = datetime.now(UTC)
    await job_factory.insert(
        workers,
        id=worker_id,
        hostname="host",
        pid=100,
        version="1.2.3",
        queues=["jobs.ready.high"],
        concurrency=4,
        active_jobs=0,
        started_at=now - timedelta(hours=1),
        last_heartbeat_at=now - age,
        **extra,
    )


async def reading_heartbeats(job_factory: Any) -> None:
    now = datetime.now(UTC)
    await job_factory.insert(
        read_horizons, replica_id="scheduler-a", queue=HEARTBEAT, horizon=now, updated_at=now
    )


@pytest.fixture
async def control_queue(app: Any, rabbit_url: str) -> AsyncIterator[AbstractQueue]:
    """A queue bound like a worker's control queue, in this test's vhost."""
    connection = await aio_pika.connect(rabbit_url)
    channel = await connection.channel()
    queue = await channel.declare_queue(exclusive=True)
    await queue.bind(await channel.get_exchange(EVENTS_EXCHANGE), routing_key=CONTROL_PATTERN)
    yield queue
    await connection.close()


async def test_workers_show_their_running_jobs_counts_and_live_first_in_numeric_order(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    await reading_heartbeats(job_factory)
    await add_worker(job_factory, "worker-10", timedelta(seconds=1), processed=3)
    await add_worker(job_factory, "worker-2", timedelta(seconds=1), processed=12, failed=4)
    await add_worker(job_factory, "worker-1", timedelta(minutes=5))  # dead
    await add_worker(job_factory, "worker-3", timedelta(seconds=2), quiet=True)
    now = datetime.now(UTC)
    older = await job_factory.job(
        status="running",
        worker_id="worker-2",
        type="email",
        attempt=2,
        started_at=now - timedelta(seconds=40),
        progress={"attempt": 2, "percent": 50.0, "message": "half"},
    )
    newer = await job_factory.job(
        status="running",
        worker_id="worker-2",
        started_at=now - timedelta(seconds=5),
        progress={"attempt": 1, "percent": 90.0, "message": "an earlier attempt's"},
        attempt=2,
    )
    # Not running there (any more): never listed as what the worker runs.
    await job_factory.job(status="succeeded", worker_id="worker-2", started_at=now)
    await job_factory.job(status="running", worker_id="worker-elsewhere", started_at=now)

    body = (await client.get("/api/workers", headers=auth.admin)).json()
    assert [(w["id"], w["status"]) for w in body["items"]] == [
        ("worker-2", "alive"),
        ("worker-10", "alive"),
        ("worker-3", "quiet"),
        ("worker-1", "dead"),
    ]
    assert body["counts"] == {"alive": 2, "quiet": 1, "stopping": 0, "dead": 1, "unknown": 0}
    two = body["items"][0]
    assert (two["processed"], two["failed"], two["quiet"]) == (12, 4, False)
    assert [(r["jobId"], r["jobType"], r["attempt"], r["progress"]) for r in two["running"]] == [
        (str(older), "email", 2, 50.0),
        (str(newer), "echo", 2, None),
    ]
    assert datetime.fromisoformat(two["running"][0]["startedAt"]) == now - timedelta(seconds=40)
    assert body["items"][1]["running"] == []
    assert body["items"][2]["quiet"] is True


async def test_quiet_and_stop_are_sent_to_the_worker_for_admins_only(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, control_queue: AbstractQueue
) -> None:
    await reading_heartbeats(job_factory)
    await add_worker(job_factory, "worker-7", timedelta(seconds=1))
    await add_worker(job_factory, "worker-gone", timedelta(minutes=5))

    refused = await client.post("/api/workers/worker-7/quiet", headers=auth.user)
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
    unknown = await client.post(f"/api/workers/{uuid.uuid4()}/stop", headers=auth.admin)
    assert (unknown.status_code, unknown.json()["error"]) == (404, "not_found")
    dead = await client.post("/api/workers/worker-gone/quiet", headers=auth.admin)
    assert (dead.status_code, dead.json()["error"]) == (409, "conflict")
    assert "dead" in dead.json()["message"]
    assert (await client.post("/api/workers/worker-7/pause", headers=auth.admin)).status_code in (
        404,
        405,
    )

    quiet = await client.post("/api/workers/worker-7/quiet", headers=auth.admin)
    assert quiet.status_code == 202, quiet.text
    assert quiet.json() | {"requestedAt": None} == {
        "workerId": "worker-7",
        "command": "quiet",
        "requestedBy": auth.admin_email,
        "requestedAt": None,
    }
    # The first message the workers see is the admin's: nothing was sent for the refusals.
    sent = WorkerControl.model_validate_json((await next_message(control_queue)).body)
    assert (sent.worker_id, sent.command, sent.requested_by) == (
        "worker-7",
        "quiet",
        auth.admin_email,
    )
    stop = await client.post("/api/workers/worker-7/stop", headers=auth.admin)
    assert stop.status_code == 202, stop.text
    sent = WorkerControl.model_validate_json((await next_message(control_queue)).body)
    assert (sent.worker_id, sent.command) == ("worker-7", "stop")
