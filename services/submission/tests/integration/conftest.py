"""Fixtures: the real app (lifespan run in-process) over real MongoDB and RabbitMQ."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aio_pika
import httpx
import pytest
from aio_pika.abc import AbstractChannel, AbstractRobustConnection

from jobs_common.auth import Identity
from jobs_common.contracts import JobsSubmitted, JobSubmitted, utcnow
from jobs_common.fast_routes import FastRoutes
from jobs_common.mongo import create_client
from jobs_common.topology import SUBMITTED, declare_topology
from jobs_submission.adapters.job_types import TYPES, WORKERS, JobTypeStore, type_document
from jobs_submission.domain.job_types import AnnouncedType, TypeCatalog
from jobs_submission.service import create_app
from jobs_submission.settings import Settings
from jobs_testing.builtin_types import builtin_announcement, builtin_types

TOKEN = "submission-test-internal-token-0123456789"
USER = Identity(user_id="u1", email="user@test.com", role="user")
OTHER = Identity(user_id="u2", email="other@test.com", role="user")
ADMIN = Identity(user_id="a1", email="admin@test.com", role="admin")

EMAIL_JOB: dict[str, Any] = {
    "type": "email",
    "priority": 2,
    "payload": {"to": "someone@example.com", "subject": "hello", "body": "hi there"},
}


async def wait_until(
    predicate: Callable[[], Awaitable[bool]], *, timeout: float = 15.0, interval: float = 0.02
) -> None:
    """Poll ``predicate`` until it holds; fail after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not await predicate():  # noqa: ASYNC110 - a condition in another store
            await asyncio.sleep(interval)


@dataclass
class RunningApp:
    client: httpx.AsyncClient
    settings: Settings

    def headers(self, identity: Identity = USER, **extra: str) -> dict[str, str]:
        return {**identity.headers(TOKEN), **extra}

    async def submit(
        self, body: Any = None, *, identity: Identity = USER, key: str | None = None
    ) -> httpx.Response:
        headers = self.headers(identity)
        if key is not None:
            headers["Idempotency-Key"] = key
        return await self.client.post(
            "/api/v1/jobs", json=EMAIL_JOB if body is None else body, headers=headers
        )

    async def submit_batch(
        self, body: Any, *, identity: Identity = USER, key: str | None = None
    ) -> httpx.Response:
        headers = self.headers(identity)
        if key is not None:
            headers["Idempotency-Key"] = key
        return await self.client.post("/api/v1/batches", json=body, headers=headers)


AppFactory = Callable[..., AbstractAsyncContextManager[RunningApp]]


@pytest.fixture
def settings_factory(
    mongo_url: str, mongo_db_name: str, rabbit_url: str
) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "environment": "test",
            "mongo_url": mongo_url,
            "mongo_db": mongo_db_name,
            "amqp_url": rabbit_url,
            "internal_token": TOKEN,
            "relay_poll_interval_seconds": 0.05,
            "broker_retry_seconds": 0.1,
            "relay_retry_base_seconds": 0.05,
            "relay_retry_max_seconds": 0.2,
            "scheduler_urls": [],  # no project quotas (test_submission_project_quotas.py)
        }
        values.update(overrides)
        return Settings(**values)

    return build


async def announce_builtin_types(settings: Settings) -> None:
    """Record, as the registry does, what a worker with the built-in handlers announces
    when it starts and when it stops: the types are known, no worker is live."""
    client = create_client(settings.mongo_url)
    try:
        store = JobTypeStore(client, settings.mongo_db)
        await store.record(builtin_announcement())
        await store.record(builtin_announcement(leaving=True))
    finally:
        await client.close()


class BuiltinTypes:
    """The registry as the service holds it once a worker announced the built-in types, for
    the tests that build the submission service without the app (``Acceptance(types=...)``)."""

    def __init__(self) -> None:
        now = utcnow()
        self.catalog = TypeCatalog(
            {
                info.job_type: AnnouncedType.of({"_id": info.job_type, **type_document(info, now)})
                for info in builtin_types()
            }
        )

    async def catalog_for(self, job_types: Iterable[object]) -> TypeCatalog:
        return self.catalog


@pytest.fixture
def app_factory(settings_factory: Callable[..., Settings]) -> AppFactory:
    """The app over this test's database; ``announce_builtins=False``: no worker has
    announced the built-in types yet; ``fast_routes=False``: FastAPI's routes answer every
    request (``jobs_common.fast_routes``)."""

    @asynccontextmanager
    async def run(
        *, announce_builtins: bool = True, fast_routes: bool = True, **overrides: Any
    ) -> AsyncIterator[RunningApp]:
        settings = settings_factory(**overrides)
        if announce_builtins:
            await announce_builtin_types(settings)
        app = create_app(settings)
        if not fast_routes:
            app.user_middleware = [m for m in app.user_middleware if m.cls is not FastRoutes]
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://submission") as c:
                yield RunningApp(c, settings)

    return run


@pytest.fixture
async def collection(mongo_url: str, mongo_db_name: str) -> AsyncIterator[Any]:
    client = create_client(mongo_url)
    yield client[mongo_db_name]["submissions"]
    await client.close()


@pytest.fixture
async def stored(mongo_url: str, mongo_db_name: str) -> AsyncIterator[Any]:
    """Counts every document of the service's database (submissions, their outbox, batches)
    but the type registry's (which a worker's announcement writes, not a submission)."""
    client = create_client(mongo_url)
    database = client[mongo_db_name]

    async def count() -> int:
        names = set(await database.list_collection_names()) - {TYPES, WORKERS}
        return sum([await database[name].count_documents({}) for name in names])

    yield count
    await client.close()


@pytest.fixture
async def batches(mongo_url: str, mongo_db_name: str) -> AsyncIterator[Any]:
    client = create_client(mongo_url)
    yield client[mongo_db_name]["batches"]
    await client.close()


@dataclass
class Broker:
    connection: AbstractRobustConnection
    channel: AbstractChannel

    async def drain_submitted(self) -> list[aio_pika.abc.AbstractIncomingMessage]:
        """Every message currently on jobs.submitted (acked)."""
        queue = await self.channel.get_queue(SUBMITTED)
        messages = []
        while (message := await queue.get(no_ack=True, fail=False)) is not None:
            messages.append(message)
        return messages

    async def drain_jobs(self) -> list[JobSubmitted]:
        """The jobs of every message currently on jobs.submitted (acked), in order."""
        return [
            job
            for message in await self.drain_submitted()
            for job in JobsSubmitted.model_validate_json(message.body).jobs
        ]


@pytest.fixture
async def broker(rabbit_url: str) -> AsyncIterator[Broker]:
    connection = await aio_pika.connect_robust(rabbit_url)
    channel = await connection.channel()
    await declare_topology(channel)
    yield Broker(connection, channel)
    await connection.close()
