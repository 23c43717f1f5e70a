"""Gateway fixtures: a migrated+seeded template database cloned per test, real upstreams
(an ASGI echo app under uvicorn) and the gateway app with its lifespan running."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from jobs_common.auth import TokenKeys
from jobs_gateway.service import create_app
from jobs_gateway.settings import Settings
from jobs_testing.asgi_server import serve_app as serve
from jobs_testing.infra import free_port
from jobs_testing.plugin import PostgresServer

TEST_JWT_SECRET = "test-jwt-secret-0123456789abcdef-0123456789"
TEST_INTERNAL_TOKEN = "test-internal-token-0123456789abcdef"
# What the gateway under test signs with (the settings' default issuer and audience).
TEST_KEYS = TokenKeys(secret=TEST_JWT_SECRET, issuer="jobs-gateway", audience="jobs-api")


@pytest.fixture(scope="session")
async def gateway_template(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """A database migrated to the gateway head and seeded, used only as a template."""
    from jobs_gateway.adapters.seed import seed_database
    from jobs_gateway.migrate import upgrade_async

    name = f"tpl_gateway_{uuid.uuid4().hex[:8]}"
    url = await postgres_server.create(name)
    await upgrade_async(url)
    await seed_database(url)
    yield name
    await postgres_server.drop(name)


@pytest.fixture
async def gateway_database_url(
    postgres_server: PostgresServer, gateway_template: str
) -> AsyncIterator[str]:
    url = await postgres_server.clone(gateway_template)
    yield url
    await postgres_server.drop(url.rsplit("/", 1)[1])


@dataclass
class Recorded:
    method: str
    raw_path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k == name]
        return values[-1] if values else None

    def header_names(self) -> set[str]:
        return {k for k, _ in self.headers}


@dataclass
class EchoUpstream:
    """Records each request; answers JSON describing it. ``?status=N`` picks the status,
    a path ending in ``/slow`` waits for ``release``."""

    name: str
    requests: list[Recorded] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    url: str = ""
    # Canned JSON answers by path (a test's dashboard counting a project's unfinished jobs).
    answers: dict[str, tuple[int, Any]] = field(default_factory=dict)

    def calls(self) -> list[Recorded]:
        return [r for r in self.requests if r.raw_path != "/health"]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = scope["query_string"].decode()
        record = Recorded(
            method=scope["method"],
            raw_path=scope["raw_path"].decode(),
            query=query,
            headers=[(k.decode(), v.decode()) for k, v in scope["headers"]],
            body=body,
        )
        self.requests.append(record)
        if scope["path"] in self.answers:
            code, canned = self.answers[scope["path"]]
            await send(
                {
                    "type": "http.response.start",
                    "status": code,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": orjson.dumps(canned)})
            return
        if scope["path"].endswith("/slow"):
            await self.release.wait()
        status = 200
        for part in query.split("&"):
            if part.startswith("status="):
                status = int(part.split("=", 1)[1])
        payload = orjson.dumps(
            {"upstream": self.name, "method": record.method, "path": record.raw_path}
        )
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/vnd.echo+json"),
                    (b"location", b"/somewhere"),
                    (b"x-upstream-private", b"secret"),
                    (b"set-cookie", b"upstream=1"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


@dataclass
class Upstreams:
    submission: EchoUpstream
    dashboard: EchoUpstream


@pytest.fixture
async def upstreams() -> AsyncIterator[Upstreams]:
    submission, dashboard = EchoUpstream("submission"), EchoUpstream("dashboard")
    async with serve(submission, free_port()) as s_url, serve(dashboard, free_port()) as d_url:
        submission.url, dashboard.url = s_url, d_url
        yield Upstreams(submission, dashboard)
        submission.release.set()
        dashboard.release.set()


SettingsFactory = Callable[..., Settings]


@pytest.fixture
def make_settings(gateway_database_url: str) -> SettingsFactory:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "environment": "test",
            "database_url": gateway_database_url,
            "jwt_secret": TEST_JWT_SECRET,
            "internal_token": TEST_INTERNAL_TOKEN,
            "submission_url": f"http://127.0.0.1:{free_port()}",
            "dashboard_url": f"http://127.0.0.1:{free_port()}",
            # No broker unless a test passes one: live events are optional for HTTP.
            "amqp_url": f"amqp://guest:guest@127.0.0.1:{free_port()}/",
            "log_json": False,
            "startup_timeout_seconds": 5,
        }
        values.update(overrides)
        return Settings(**values)

    return build


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.1.2.3", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield client


GatewayFactory = Callable[..., AbstractAsyncContextManager[httpx.AsyncClient]]


@pytest.fixture
def gateway_factory(make_settings: SettingsFactory) -> GatewayFactory:
    """``async with gateway_factory(**settings) as client``: the app running with its lifespan."""

    def build(**overrides: Any) -> AbstractAsyncContextManager[httpx.AsyncClient]:
        return running(create_app(make_settings(**overrides)))

    return build


@pytest.fixture
async def gateway(
    gateway_factory: GatewayFactory, upstreams: Upstreams
) -> AsyncIterator[httpx.AsyncClient]:
    async with gateway_factory(
        submission_url=upstreams.submission.url, dashboard_url=upstreams.dashboard.url
    ) as client:
        yield client


async def login(client: httpx.AsyncClient, email: str, password: str) -> dict[str, Any]:
    response = await client.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
async def admin_token(gateway: httpx.AsyncClient) -> str:
    return str((await login(gateway, "admin@test.com", "admin123"))["token"])


@pytest.fixture
async def user_token(gateway: httpx.AsyncClient) -> str:
    return str((await login(gateway, "user@test.com", "user123"))["token"])


ServeApp = Callable[..., AbstractAsyncContextManager[str]]


@pytest.fixture
def serve_app() -> ServeApp:
    """:func:`serve` for test modules: ``async with serve_app(app, port, ws="auto") as url``."""
    return serve
