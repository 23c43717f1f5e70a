"""A real scheduler runtime on a fresh database and vhost, and a client bus to talk to it."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any, Literal

import aio_pika
import httpx
import pytest
from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.auth import Identity
from jobs_common.contracts import (
    ActiveAttempt,
    CancelAttempt,
    ErrorKind,
    JobDispatch,
    JobError,
    JobResult,
    JobSubmitted,
    WorkerHeartbeat,
    utcnow,
)
from jobs_common.db import create_engine
from jobs_common.jobstore import dead_letters, job_events, jobs, poison_messages
from jobs_common.rabbit import BatchConsumer, RabbitBus
from jobs_scheduler.service import Runtime, create_app, start_runtime, stop_runtime
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

# The lease of a test marked ``short_lease``: leases run out, and claims are judged, at once.
SHORT_LEASE = 1


@pytest.fixture
def scheduler_settings(
    jobs_database_url: str, rabbit_url: str, request: pytest.FixtureRequest
) -> Settings:
    settings = Settings(
        database_url=jobs_database_url,
        amqp_url=rabbit_url,
        migrate_on_start=False,
        retry_base_delay_ms=50,
        retry_jitter=False,
        promotion_interval_seconds=0.05,
        reaper_interval_seconds=0.1,
        relay_interval_seconds=0.05,
        timeout_grace_seconds=0,
        db_pool_size=4,
        # No workers here: every dispatch goes to its queue (test_scheduler_routing.py routes).
        route_by_live_workers=False,
    )
    if request.node.get_closest_marker("short_lease") is None:
        return settings
    return settings.model_copy(update={"lease_seconds": SHORT_LEASE, "tick_interval_seconds": 0.1})


# An UPDATE that sets jobs.status, and the one shape the status writer gives it.
STATUS_UPDATE = re.compile(r"^\s*UPDATE jobs SET ((?!\bFROM\b|\bWHERE\b).)*\bstatus=", re.S)
WRITER_UPDATE = re.compile(
    r"^UPDATE jobs SET .*\bstatus=(\w+)\.target\b.*"
    r" FROM unnest\(.*\) AS \1\(id, attempt, current, target",
    re.S,
)


def consumer_of(scheduler: Runtime, queue: str) -> BatchConsumer:
    return next(c for c in scheduler.consumers.consumers if c.queue.name == queue)


@pytest.fixture
async def scheduler(scheduler_settings: Settings) -> AsyncIterator[Runtime]:
    """A running scheduler; every status write it sends must come from the status writer
    (the runtime twin of ``test_scheduler_status_writer.py``'s scan)."""
    runtime = await start_runtime(scheduler_settings)
    others: list[str] = []

    def check(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if STATUS_UPDATE.match(statement) and not WRITER_UPDATE.match(statement):
            others.append(statement)

    event.listen(runtime.engine.sync_engine, "before_cursor_execute", check)
    yield runtime
    await stop_runtime(runtime)
    assert others == [], "jobs.status written outside adapters/status.py"


INTERNAL_TOKEN = "scheduler-test-internal-token-0123456789"


@pytest.fixture
async def api(scheduler_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The scheduler's internal HTTP API (the real app, its lifespan run) over ASGI."""
    settings = scheduler_settings.model_copy(update={"internal_token": INTERNAL_TOKEN})
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://scheduler") as client:
            yield client


def as_(identity: Identity) -> dict[str, str]:
    """The headers the gateway and the dashboard send for ``identity``."""
    return identity.headers(INTERNAL_TOKEN)


@pytest.fixture
async def db(jobs_database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(jobs_database_url, pool_size=2)
    yield engine
    await engine.dispose()


@pytest.fixture
async def bus(rabbit_url: str, scheduler: Runtime) -> AsyncIterator[RabbitBus]:
    client = await RabbitBus.open(rabbit_url, name="test-client")
    yield client
    await client.close()


def submitted(**overrides: Any) -> JobSubmitted:
    fields: dict[str, Any] = {
        "job_id": uuid.uuid4(),
        "job_type": "simulate",
        "priority": 2,
        "payload": {"seed": 1},
        "submitted_by": "user@test.com",
        "max_attempts": 3,
        "timeout_seconds": 30,
        "submitted_at": utcnow(),
    }
    fields.update(overrides)
    return JobSubmitted(**fields)


FAILURE = JobError(kind=ErrorKind.RETRYABLE, error_class="Boom", message="it broke")


def job_result(
    job_id: uuid.UUID,
    attempt: int,
    outcome: Literal["succeeded", "failed", "cancelled", "unserved"] = "succeeded",
    *,
    worker_id: str = "w1",
    result: dict[str, Any] | None = None,
    error: JobError | None = None,
    started_at: datetime | None = None,
) -> JobResult:
    """What a worker reports at the end of an attempt; a failure defaults to ``FAILURE``."""
    now = utcnow()
    return JobResult(
        job_id=job_id,
        attempt=attempt,
        worker_id=worker_id,
        outcome=outcome,
        result=(result if result is not None else {}) if outcome == "succeeded" else None,
        error=error if error is not None or outcome != "failed" else FAILURE,
        started_at=started_at or now - timedelta(milliseconds=30),
        finished_at=now,
    )


async def next_dispatch(
    bus: RabbitBus, queue: str = topology.READY_MEDIUM, *, timeout: float = 10.0
) -> JobDispatch:
    """Take (and ack) the next message of a ready queue."""
    ready = bus.topology.queues[queue]

    async def take() -> JobDispatch | None:
        message = await ready.get(no_ack=True, fail=False)
        return JobDispatch.model_validate_json(message.body) if message else None

    return await eventually(take, timeout=timeout, what=f"a dispatch on {queue}")


async def job_row(db: AsyncEngine, job_id: uuid.UUID) -> Any:
    async with db.connect() as connection:
        return (await connection.execute(select(jobs).where(jobs.c.id == job_id))).first()


async def wait_status(db: AsyncEngine, job_id: uuid.UUID, status: str) -> Any:
    async def probe() -> Any:
        row = await job_row(db, job_id)
        return row if row is not None and row.status == status else None

    return await eventually(probe, what=f"job {job_id} {status}")


async def dead_letter_of(db: AsyncEngine, job_id: uuid.UUID) -> Any:
    """The job's one dead-letter row."""
    async with db.connect() as connection:
        return (
            await connection.execute(select(dead_letters).where(dead_letters.c.job_id == job_id))
        ).one()


async def timeline_reasons(db: AsyncEngine, job_id: uuid.UUID) -> list[str]:
    """The reasons of the job's recorded moves, oldest first."""
    async with db.connect() as connection:
        rows = await connection.execute(
            select(job_events.c.reason)
            .where(job_events.c.job_id == job_id)
            .order_by(job_events.c.id)
        )
        return list(rows.scalars())


async def control_queue(bus: RabbitBus) -> aio_pika.abc.AbstractQueue:
    queue = await bus.channel.declare_queue(exclusive=True, auto_delete=True)
    await queue.bind(bus.topology.events, routing_key=topology.CONTROL_PATTERN)
    return queue


async def next_cancel(queue: aio_pika.abc.AbstractQueue) -> CancelAttempt:
    async def take() -> CancelAttempt | None:
        message = await queue.get(no_ack=True, fail=False)
        return CancelAttempt.model_validate_json(message.body) if message else None

    return await eventually(take, what="a CancelAttempt broadcast")


def heartbeat(worker_id: str, *active: tuple[uuid.UUID, int]) -> WorkerHeartbeat:
    now = utcnow()
    return WorkerHeartbeat(
        worker_id=worker_id,
        hostname="host-a",
        pid=42,
        version="1.0",
        queues=["jobs.ready.medium"],
        concurrency=10,
        active=[ActiveAttempt(job_id=j, attempt=a) for j, a in active],
        started_at=now,
        sent_at=now,
    )


async def poison_reasons(db: AsyncEngine, message_id: uuid.UUID) -> list[str]:
    """The reasons ``poison_messages`` holds for a message id."""
    async with db.connect() as connection:
        rows = await connection.execute(
            select(poison_messages.c.reason).where(poison_messages.c.message_id == str(message_id))
        )
        return list(rows.scalars())
