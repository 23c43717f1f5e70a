"""Dashboard integration fixtures: a migrated job store, a vhost, the app with its lifespan."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aio_pika
import httpx
import pytest
from aio_pika.abc import AbstractQueue
from fastapi import FastAPI
from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from jobs_common.auth import Identity
from jobs_common.db import async_url
from jobs_common.error_handlers import install_error_handlers
from jobs_common.jobstore import dead_letters, job_attempts, job_events, jobs
from jobs_common.mongo import create_client
from jobs_dashboard.service import create_app
from jobs_dashboard.settings import Settings
from jobs_scheduler.api.dead_letters import router as scheduler_dead_letters
from jobs_scheduler.api.project_flow import router as scheduler_project_flow
from jobs_scheduler.api.project_queues import router as scheduler_queues
from jobs_scheduler.api.retry_policies import router as scheduler_retry_policies
from jobs_scheduler.api.schedules import router as scheduler_schedules
from jobs_scheduler.app.unit_of_work import UnitOfWork
from jobs_scheduler.service import job_defaults
from jobs_scheduler.settings import Settings as SchedulerSettings
from jobs_submission.adapters.job_types import JobTypeStore
from jobs_submission.service import create_app as create_submission_app
from jobs_submission.settings import Settings as SubmissionSettings
from jobs_testing.asgi_server import serve_app
from jobs_testing.builtin_types import builtin_announcement
from jobs_testing.infra import free_port

INTERNAL_TOKEN = "dashboard-test-internal-token-0123456789"
ADMIN = Identity(user_id="u-admin", email="admin@test.com", role="admin")
USER = Identity(user_id="u-user", email="user@test.com", role="user")
OTHER = Identity(user_id="u-other", email="other@test.com", role="user")
BASE_TIME = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def headers(identity: Identity) -> dict[str, str]:
    return identity.headers(INTERNAL_TOKEN)


@dataclass(frozen=True)
class Auth:
    """Gateway-style identity headers for the test callers."""

    admin: dict[str, str]
    user: dict[str, str]
    other: dict[str, str]
    user_email: str = USER.email
    other_email: str = OTHER.email
    admin_email: str = ADMIN.email


@dataclass
class JobFactory:
    """Inserts job store rows directly; the per-test database is dropped afterwards."""

    engine: AsyncEngine
    base_time: datetime = BASE_TIME
    _count: int = 0

    async def job(self, **overrides: Any) -> uuid.UUID:
        self._count += 1
        created = overrides.pop("created_at", BASE_TIME + timedelta(minutes=self._count))
        row: dict[str, Any] = {
            "id": uuid.uuid4(),
            "type": "echo",
            "priority": 2,
            "payload": {"n": self._count},
            "submitted_by": USER.email,
            "status": "queued",
            "attempt": 1,
            "max_attempts": 3,
            "attempt_limit": 3,
            "timeout_seconds": 60,
            "trace_id": uuid.uuid4().hex,
            "created_at": created,
            "updated_at": overrides.pop("updated_at", created),
        }
        row.update(overrides)
        async with self.engine.begin() as connection:
            await connection.execute(jobs.insert().values(**row))
        job_id: uuid.UUID = row["id"]
        return job_id

    async def attempt(self, job_id: uuid.UUID, attempt: int, **overrides: Any) -> None:
        row = {"job_id": job_id, "attempt": attempt, "status": "failed", **overrides}
        async with self.engine.begin() as connection:
            await connection.execute(job_attempts.insert().values(**row))

    async def event(self, job_id: uuid.UUID, **values: Any) -> None:
        row = {"job_id": job_id, "attempt": 1, "reason": "test", **values}
        async with self.engine.begin() as connection:
            await connection.execute(job_events.insert().values(**row))

    async def dead_letter(self, job_id: uuid.UUID, **overrides: Any) -> uuid.UUID:
        row: dict[str, Any] = {
            "id": uuid.uuid4(),
            "job_id": job_id,
            "attempt": 3,
            "reason": "attempts exhausted",
            "last_error": "boom",
            "last_error_class": "RuntimeError",
            "payload_snapshot": {},
            **overrides,
        }
        async with self.engine.begin() as connection:
            await connection.execute(dead_letters.insert().values(**row))
        dead_id: uuid.UUID = row["id"]
        return dead_id

    async def insert(self, table: Table, **values: Any) -> None:
        """Any other job store row (schedules, workers, batches, logs...)."""
        async with self.engine.begin() as connection:
            await connection.execute(table.insert().values(**values))


async def next_message(queue: AbstractQueue, timeout: float = 10.0) -> aio_pika.IncomingMessage:
    """The next delivery on ``queue`` (acked), or fail after ``timeout`` seconds."""
    async with asyncio.timeout(timeout), queue.iterator() as messages:
        async for message in messages:
            await message.ack()
            assert isinstance(message, aio_pika.IncomingMessage)
            return message
    raise AssertionError("no message")


QueueOpener = Callable[[str], Awaitable[AbstractQueue]]


@pytest.fixture
async def command_queue(app: FastAPI, rabbit_url: str) -> AsyncIterator[QueueOpener]:
    """Opens a queue of this test's vhost (declared by the app's lifespan) by name."""
    connection = await aio_pika.connect(rabbit_url)
    channel = await connection.channel()

    async def open_queue(name: str) -> AbstractQueue:
        return await channel.declare_queue(name, passive=True)

    yield open_queue
    await connection.close()


@pytest.fixture
async def store_engine(jobs_database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(async_url(jobs_database_url))
    yield engine
    await engine.dispose()


@pytest.fixture
def auth() -> Auth:
    return Auth(admin=headers(ADMIN), user=headers(USER), other=headers(OTHER))


@pytest.fixture
def job_factory(store_engine: AsyncEngine) -> JobFactory:
    return JobFactory(store_engine)


@pytest.fixture
async def scheduler_url(store_engine: AsyncEngine) -> AsyncIterator[str]:
    """The scheduler's internal API (the real routes, over HTTP, on this test's database):
    the owner of the schedules, named retry policies, queues, project weights and dead letters,
    which the dashboard's commands reach. Its dispatches stay in the outbox: no relay runs here."""
    api = FastAPI()
    install_error_handlers(api)
    api.state.internal_token = INTERNAL_TOKEN
    api.state.engine = store_engine
    api.state.work = UnitOfWork(store_engine)
    api.state.defaults = job_defaults(  # a schedule's run now records its job
        SchedulerSettings(environment="test", internal_token=INTERNAL_TOKEN)
    )
    api.include_router(scheduler_schedules)
    api.include_router(scheduler_retry_policies)
    api.include_router(scheduler_dead_letters)
    api.include_router(scheduler_queues)
    api.include_router(scheduler_project_flow)
    async with serve_app(api, free_port()) as url:
        yield url


@pytest.fixture
async def registry_url(mongo_url: str, mongo_db_name: str, rabbit_url: str) -> AsyncIterator[str]:
    """The real submission service (the type registry's owner), served on a port, with the
    built-in types recorded as a worker announces them: what the dashboard asks to check a
    schedule's template or an edited requeue. A test that needs it overrides ``settings``
    with ``submission_url=registry_url``."""
    settings = SubmissionSettings(
        environment="test",
        mongo_url=mongo_url,
        mongo_db=mongo_db_name,
        amqp_url=rabbit_url,
        internal_token=INTERNAL_TOKEN,
        relay_enabled=False,
        scheduler_urls=[],
    )
    mongo = create_client(mongo_url)
    try:
        store = JobTypeStore(mongo, mongo_db_name)
        await store.record(builtin_announcement())
        await store.record(builtin_announcement(leaving=True))
    finally:
        await mongo.close()
    submission = create_submission_app(settings)
    async with (
        submission.router.lifespan_context(submission),
        serve_app(submission, free_port()) as url,
    ):
        yield url


@pytest.fixture
def registry_down() -> None:
    """Requested by a test that wants nothing listening at DASHBOARD_SUBMISSION_URL."""


@pytest.fixture
def settings(
    request: pytest.FixtureRequest,
    jobs_database_url: str,
    rabbit_url: str,
    scheduler_url: str,
) -> Settings:
    # The submission service starts (about a second) only for a test that checks payloads
    # (marked ``registry``); for the others nothing listens at its URL.
    needed = request.node.get_closest_marker("registry") is not None
    down = not needed or "registry_down" in request.fixturenames
    registry_url = "" if down else request.getfixturevalue("registry_url")
    return Settings(
        database_url=async_url(jobs_database_url),
        amqp_url=rabbit_url,
        internal_token=INTERNAL_TOKEN,
        environment="test",
        db_pool_size=2,
        # Payload checks (the built-in types' too) by the real submission service.
        submission_url=f"http://127.0.0.1:{free_port()}" if down else registry_url,
        scheduler_urls=[scheduler_url],
    )


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://dashboard") as http:
        yield http
