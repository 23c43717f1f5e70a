"""The platform gauges the dashboard refreshes on a timer: queue depth from the broker, the
oldest queued job's age and the time to drain per ready queue, each project's queue's
figures, open dead letters, live workers; a failing refresh is counted and the others go on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aio_pika
import pytest
from fastapi import FastAPI
from prometheus_client import REGISTRY
from sqlalchemy import delete

from jobs_common import topology
from jobs_common.jobstore import queues, read_horizons, workers
from jobs_dashboard.adapters import metrics
from jobs_dashboard.settings import Settings
from jobs_testing.waiting import eventually

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"gauge_refresh_interval_seconds": 0.05})


@pytest.fixture(autouse=True)
def fresh_gauges() -> Iterator[None]:
    """The gauges are process-wide: no sample of another test's app is left to read."""
    for gauge in (metrics.QUEUE_DEPTH, metrics.QUEUE_TIME_TO_DRAIN, metrics.WORKER_UP):
        gauge.clear()
    yield


def value(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


async def full_refresh(sentinel: str = "dlq_size") -> None:
    """Wait until a whole refresh pass ran after this call: the ``sentinel`` gauge is set in
    each pass; the first pass seen setting it may have begun before, the second began after."""
    gauge = {"dlq_size": metrics.DLQ_SIZE, "workers_up": metrics.WORKERS_UP}[sentinel]

    async def refreshed() -> bool:
        return value(sentinel) != -1

    for _ in range(2):
        gauge.set(-1)
        await eventually(refreshed, timeout=10, what="a refresh of the platform gauges")


async def publish_ready(rabbit_url: str, queue: str, count: int) -> None:
    connection = await aio_pika.connect(rabbit_url)
    try:
        channel = await connection.channel(publisher_confirms=True)
        exchange = await channel.get_exchange(topology.JOBS_EXCHANGE)
        for _ in range(count):
            await exchange.publish(aio_pika.Message(b"{}"), routing_key=queue)
    finally:
        await connection.close()


async def test_queue_depth_reflects_the_messages_in_each_ready_queue(
    app: FastAPI, rabbit_url: str
) -> None:
    await publish_ready(rabbit_url, topology.READY_HIGH, 3)
    await publish_ready(rabbit_url, topology.READY_LOW, 1)
    await full_refresh()
    assert value("queue_depth", queue=topology.READY_HIGH) == 3
    assert value("queue_depth", queue=topology.READY_MEDIUM) == 0
    assert value("queue_depth", queue=topology.READY_LOW) == 1

    await app.state.bus.connection.close()  # the broker no longer answers: no sample
    await full_refresh()
    assert value("queue_depth", queue=topology.READY_HIGH) is None


async def test_oldest_ready_age_per_queue_from_the_queued_jobs(
    app: FastAPI, job_factory: Any
) -> None:
    now = datetime.now(UTC)
    await job_factory.job(status="queued", priority=3, queued_at=now - timedelta(minutes=10))
    await job_factory.job(status="queued", priority=3, queued_at=now - timedelta(minutes=1))
    await job_factory.job(status="queued", priority=1, queued_at=now - timedelta(seconds=30))
    await job_factory.job(status="running", priority=2, queued_at=now - timedelta(hours=1))
    await full_refresh()
    high = value("queue_oldest_ready_age_seconds", queue=topology.READY_HIGH)
    low = value("queue_oldest_ready_age_seconds", queue=topology.READY_LOW)
    assert high is not None and 600 <= high < 660
    assert low is not None and 30 <= low < 90
    assert value("queue_oldest_ready_age_seconds", queue=topology.READY_MEDIUM) == 0.0


async def test_time_to_drain_is_depth_over_the_recent_completion_rate(
    app: FastAPI, job_factory: Any, rabbit_url: str
) -> None:
    await publish_ready(rabbit_url, topology.READY_HIGH, 4)
    await full_refresh()
    assert value("queue_time_to_drain_seconds", queue=topology.READY_HIGH) is None  # no rate
    assert value("queue_time_to_drain_seconds", queue=topology.READY_MEDIUM) == 0.0  # empty

    job_id = await job_factory.job(status="succeeded", priority=3)
    for to_status in ("running", "failed", "running", "succeeded"):
        await job_factory.event(job_id, to_status=to_status)
    other = await job_factory.job(status="succeeded", priority=2)
    await job_factory.event(other, to_status="succeeded")
    await full_refresh()
    high = value("queue_time_to_drain_seconds", queue=topology.READY_HIGH)
    # Two attempts ended at priority 3 within the window (a few refreshes of 0.05 s, at most
    # the 60 s window): 4 messages at 2 per span take 2 spans.
    assert high is not None and 0 < high <= 2 * 60
    assert value("queue_time_to_drain_seconds", queue=topology.READY_MEDIUM) == 0.0


async def test_dlq_size_counts_open_dead_letters(app: FastAPI, job_factory: Any) -> None:
    for resolved in (False, False, True):
        job_id = await job_factory.job(status="dead")
        await job_factory.dead_letter(job_id, resolved_at=datetime.now(UTC) if resolved else None)
    await full_refresh("workers_up")
    assert value("dlq_size") == 2


async def reading_heartbeats(job_factory: Any, horizon: datetime) -> None:
    """A scheduler replica reading jobs.heartbeat, up to ``horizon``."""
    await job_factory.insert(
        read_horizons,
        replica_id="scheduler-1",
        queue=topology.HEARTBEAT,
        horizon=horizon,
        updated_at=datetime.now(UTC),
    )


async def test_worker_up_per_live_worker_and_the_total(app: FastAPI, job_factory: Any) -> None:
    now = datetime.now(UTC)
    await reading_heartbeats(job_factory, now)
    for worker_id, beat in (
        ("w-live", now),
        ("w-stopping", now),
        ("w-dead", now - timedelta(minutes=5)),
        ("w-gone", now - timedelta(hours=3)),
    ):
        await job_factory.insert(
            workers,
            id=worker_id,
            hostname="host",
            pid=1,
            version="1",
            queues=[topology.READY_HIGH],
            concurrency=4,
            active_jobs=0,
            started_at=now - timedelta(hours=4),
            last_heartbeat_at=beat,
            stopping=worker_id == "w-stopping",
        )
    await full_refresh()
    assert value("worker_up", worker="w-live") == 1
    assert value("worker_up", worker="w-stopping") == 1  # draining, still heartbeating
    assert value("worker_up", worker="w-dead") == 0
    assert value("worker_up", worker="w-gone") is None  # dead for longer than an hour
    assert value("workers_up") == 2


async def test_worker_up_keeps_its_value_while_no_scheduler_reads_heartbeats(
    app: FastAPI, job_factory: Any, store_engine: Any
) -> None:
    """A paused or stopped scheduler applies no heartbeat: the workers are not judged, so
    worker_up neither drops to 0 for the live ones nor revives the dead one."""
    now = datetime.now(UTC)
    await reading_heartbeats(job_factory, now)
    for worker_id, beat in (("w-live", now), ("w-dead", now - timedelta(minutes=5))):
        await job_factory.insert(
            workers,
            id=worker_id,
            hostname="host",
            pid=1,
            version="1",
            queues=[topology.READY_HIGH],
            concurrency=4,
            active_jobs=1,
            started_at=now - timedelta(hours=1),
            last_heartbeat_at=beat,
        )
    await full_refresh("workers_up")
    assert (value("worker_up", worker="w-live"), value("worker_up", worker="w-dead")) == (1, 0)

    async with store_engine.begin() as connection:
        await connection.execute(read_horizons.delete())  # the scheduler stopped reading
    await job_factory.insert(
        workers,
        id="w-new",
        hostname="host",
        pid=2,
        version="1",
        queues=[topology.READY_HIGH],
        concurrency=4,
        active_jobs=0,
        started_at=now,
        last_heartbeat_at=now,
    )
    await full_refresh("workers_up")
    assert value("worker_up", worker="w-live") == 1
    assert value("worker_up", worker="w-dead") == 0
    assert value("worker_up", worker="w-new") is None  # never judged
    assert value("workers_up") == 1


async def test_a_failing_refresh_is_counted_and_the_other_gauges_go_on(
    app: FastAPI, job_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken() -> int:
        raise RuntimeError("the database went away")

    before = value("dashboard_gauge_refresh_errors_total", gauge="dlq_size") or 0.0
    monkeypatch.setattr(app.state.gauges.reads, "open_dead_letters", broken)
    await reading_heartbeats(job_factory, datetime.now(UTC))
    await full_refresh("workers_up")  # no pass that began before the patch is left
    metrics.DLQ_SIZE.set(7)
    worker_id = f"w-{uuid.uuid4().hex[:6]}"
    await job_factory.insert(
        workers,
        id=worker_id,
        hostname="host",
        pid=1,
        version="1",
        queues=[topology.READY_HIGH],
        concurrency=4,
        active_jobs=0,
        started_at=datetime.now(UTC),
        last_heartbeat_at=datetime.now(UTC),
    )
    await full_refresh("workers_up")
    errors = value("dashboard_gauge_refresh_errors_total", gauge="dlq_size")
    assert errors is not None and errors >= before + 1
    assert value("dlq_size") == 7  # the last value stays
    assert value("worker_up", worker=worker_id) == 1
    assert app.state.gauges.alive


async def test_each_project_queue_s_figures_and_a_deleted_queue_s_series_go(
    app: FastAPI, job_factory: Any
) -> None:
    """queue_waiting / queue_running / queue_limit / queue_paused /
    queue_oldest_waiting_seconds by project and queue (docs/flow-control.md)."""
    team, other = uuid.uuid4(), uuid.uuid4()
    limited = {"id": uuid.uuid4(), "project_id": team, "name": "emails", "created_by": "t"}
    await job_factory.insert(queues, **limited, max_concurrency=3, paused=True)
    await job_factory.insert(
        queues, id=uuid.uuid4(), project_id=other, name="emails", created_by="t"
    )
    old, recent = (datetime.now(UTC) - timedelta(minutes=m) for m in (10, 1))
    for status, created in (
        ("queued", old),
        ("queued", recent),
        ("scheduled", old - timedelta(days=1)),  # not queued: not the oldest waiting
        ("running", recent),
    ):
        await job_factory.job(project_id=team, queue="emails", status=status, created_at=created)
    await job_factory.job(project_id=team, queue="emails", status="succeeded")
    await full_refresh("workers_up")
    mine = {"project": str(team), "queue": "emails"}
    theirs = {"project": str(other), "queue": "emails"}
    assert (value("queue_waiting", **mine), value("queue_running", **mine)) == (3, 1)
    assert (value("queue_limit", **mine), value("queue_paused", **mine)) == (3, 1)
    assert 590 < (value("queue_oldest_waiting_seconds", **mine) or 0) < 900
    assert (value("queue_waiting", **theirs), value("queue_paused", **theirs)) == (0, 0)
    assert value("queue_limit", **theirs) is None  # no limit: no series
    assert value("queue_oldest_waiting_seconds", **theirs) == 0

    async with job_factory.engine.begin() as connection:
        await connection.execute(delete(queues).where(queues.c.project_id == other))
    await full_refresh("workers_up")
    assert value("queue_waiting", **theirs) is None
    assert value("queue_paused", **theirs) is None
    assert value("queue_running", **mine) == 1
