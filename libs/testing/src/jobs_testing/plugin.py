"""pytest plugin: real PostgreSQL, RabbitMQ and MongoDB for the tests, each test isolated.

- PostgreSQL: :func:`postgres_server` resolves the server; suites create databases from a
  migrated template with :meth:`PostgresServer.clone` (``CREATE DATABASE ... TEMPLATE``).
- RabbitMQ: ``rabbit_url`` is a fresh vhost per test, deleted afterwards.
- MongoDB: ``mongo_url`` per session, ``mongo_db_name`` a fresh database per test.
- SMTP: ``smtp_sink`` is a real local SMTP server collecting messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import functools
import ssl
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from email.message import Message as EmailMessage
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
import httpx
import pytest

from jobs_common.mongo import create_client
from jobs_testing.driver_leaks import MongoSocketLeaks
from jobs_testing.infra import (
    Resolved,
    free_port,
    resolve_mongo,
    resolve_postgres,
    resolve_rabbitmq,
)
from jobs_testing.task_dump import (  # noqa: F401  (hooks of this plugin)
    pytest_runtest_call,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


def _port_of(url: str) -> int:
    """The port of a single-host MongoDB URL (27017 when it names none or several hosts)."""
    try:
        return urlsplit(url).port or 27017
    except ValueError:
        return 27017


def _plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


@dataclass
class PostgresServer:
    admin_url: str

    def url_for(self, database: str) -> str:
        return _with_database(_plain(self.admin_url), database)

    async def execute(self, sql: str) -> None:
        connection = await asyncpg.connect(_plain(self.admin_url))
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    async def create(self, name: str, *, template: str | None = None) -> str:
        clause = f' TEMPLATE "{template}"' if template else ""
        await self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await self.execute(f'CREATE DATABASE "{name}"{clause}')
        return self.url_for(name)

    async def drop(self, name: str) -> None:
        await self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    async def clone(self, template: str) -> str:
        return await self.create(f"t_{uuid.uuid4().hex[:16]}", template=template)


_SOURCES: dict[str, str] = {}


def _report(config: pytest.Config, what: str, resolved: Resolved) -> None:
    """Remember where a dependency came from; the terminal summary lists them."""
    _SOURCES[what] = resolved.source


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SOURCES:
        terminalreporter.section("test infrastructure")
        for what, source in _SOURCES.items():
            terminalreporter.write_line(f"{what}: {source}")


@pytest.fixture(scope="session")
def postgres_server(pytestconfig: pytest.Config) -> Iterator[PostgresServer]:
    resolved = resolve_postgres()
    _report(pytestconfig, "PostgreSQL", resolved)
    yield PostgresServer(resolved.url)
    resolved.close()


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for the management calls: each new one loads the CA bundle again
    (about 40 ms of CPU, twice per test)."""
    return ssl.create_default_context()


@dataclass
class RabbitServer:
    amqp_url: str
    management_url: str
    vhosts: list[str] = field(default_factory=list)

    def _api(self) -> tuple[str, httpx.BasicAuth]:
        parts = urlsplit(self.management_url)
        base = urlunsplit(parts._replace(netloc=f"{parts.hostname}:{parts.port}"))
        return base, httpx.BasicAuth(parts.username or "guest", parts.password or "guest")

    async def management(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        base, auth = self._api()
        async with httpx.AsyncClient(base_url=base, auth=auth, timeout=10, verify=_tls()) as client:
            response = await client.request(method, "/api" + path, **kwargs)
        response.raise_for_status()
        return response

    async def create_vhost(self) -> str:
        name = f"test-{uuid.uuid4().hex[:12]}"
        user = urlsplit(self.amqp_url).username or "guest"
        await self.management("PUT", f"/vhosts/{quote(name, safe='')}")
        await self.management(
            "PUT",
            f"/permissions/{quote(name, safe='')}/{user}",
            json={"configure": ".*", "write": ".*", "read": ".*"},
        )
        return name

    async def delete_vhost(self, name: str) -> None:
        base, auth = self._api()
        async with httpx.AsyncClient(base_url=base, auth=auth, timeout=10, verify=_tls()) as client:
            await client.delete(f"/api/vhosts/{quote(name, safe='')}")

    def url_for(self, vhost: str) -> str:
        parts = urlsplit(self.amqp_url)
        return urlunsplit(parts._replace(path="/" + quote(vhost, safe="")))


@pytest.fixture(scope="session")
def rabbit_server(pytestconfig: pytest.Config) -> Iterator[RabbitServer]:
    resolved, management = resolve_rabbitmq()
    _report(pytestconfig, "RabbitMQ", resolved)
    yield RabbitServer(resolved.url, management)
    resolved.close()


@pytest.fixture
async def rabbit_vhost(rabbit_server: RabbitServer) -> AsyncIterator[str]:
    name = await rabbit_server.create_vhost()
    yield name
    await rabbit_server.delete_vhost(name)


@pytest.fixture
def rabbit_url(rabbit_server: RabbitServer, rabbit_vhost: str) -> str:
    """An AMQP URL on a fresh vhost of its own."""
    return rabbit_server.url_for(rabbit_vhost)


@pytest.fixture(scope="session")
def mongo_url(pytestconfig: pytest.Config) -> Iterator[str]:
    resolved = resolve_mongo()
    _report(pytestconfig, "MongoDB", resolved)
    leaks = MongoSocketLeaks(_port_of(resolved.url))
    leaks.install()
    try:
        yield resolved.url
    finally:
        leaks.uninstall()
        resolved.close()


@pytest.fixture
async def mongo_db_name(mongo_url: str) -> AsyncIterator[str]:
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    client = create_client(mongo_url)
    try:
        await client.drop_database(name)
    finally:
        await client.close()


@dataclass
class SmtpSink:
    host: str
    port: int
    messages: list[EmailMessage] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_for(self, predicate: Any) -> EmailMessage:
        """The first message matching ``predicate``; wrap in ``asyncio.timeout`` to bound it."""
        while True:
            for message in self.messages:
                if predicate(message):
                    return message
            self.arrived.clear()
            await self.arrived.wait()


class _SinkHandler:
    def __init__(self, sink: SmtpSink, loop: asyncio.AbstractEventLoop) -> None:
        self.sink = sink
        self.loop = loop

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content)
        self.sink.messages.append(message)
        self.loop.call_soon_threadsafe(self.sink.arrived.set)
        return "250 Message accepted for delivery"


@contextlib.contextmanager
def running_smtp_sink() -> Iterator[SmtpSink]:
    """A real SMTP server on a free local port; call from inside the event loop."""
    from aiosmtpd.controller import Controller

    sink = SmtpSink("127.0.0.1", free_port())
    controller = Controller(
        _SinkHandler(sink, asyncio.get_running_loop()), hostname=sink.host, port=sink.port
    )
    controller.start()
    try:
        yield sink
    finally:
        controller.stop()


@pytest.fixture
async def smtp_sink() -> AsyncIterator[SmtpSink]:
    with running_smtp_sink() as sink:
        yield sink
