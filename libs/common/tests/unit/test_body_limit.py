"""The body limit middleware, driven as plain ASGI: a declared length above the limit is refused
without reading a byte; anything else is counted as ``receive()`` yields it and cut at the
limit, whatever the app does with the error; route templates pick the limit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI, Request
from starlette.types import Message, Receive, Scope, Send

from jobs_common.body_limit import (
    AUTH_MAX_BODY_BYTES,
    BATCH_MAX_BODY_BYTES,
    DEFAULT_MAX_BODY_BYTES,
    JOB_MAX_BODY_BYTES,
    BodyLimitMiddleware,
    BodyLimits,
    RouteLimit,
)
from jobs_common.error_handlers import install_error_handlers

pytestmark = pytest.mark.unit


class Client:
    """Feeds a request body in chunks and records what the app under test does."""

    def __init__(self, chunks: list[bytes], *, declared: int | None = None) -> None:
        self.chunks = chunks
        self.reads = 0
        self.sent: list[Message] = []
        self.headers = [] if declared is None else [(b"content-length", str(declared).encode())]

    def scope(self, path: str = "/things", kind: str = "http") -> Scope:
        return {"type": kind, "method": "POST", "path": path, "headers": self.headers}

    async def receive(self) -> Message:
        self.reads += 1
        if self.reads > len(self.chunks):
            return {"type": "http.disconnect"}
        more = self.reads < len(self.chunks)
        return {"type": "http.request", "body": self.chunks[self.reads - 1], "more_body": more}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    def header(self, name: bytes) -> bytes | None:
        return dict(self.sent[0]["headers"]).get(name)

    def json(self) -> Any:
        return orjson.loads(b"".join(m.get("body", b"") for m in self.sent[1:]))


class ReadsAll:
    """An app that reads the whole body, then answers 200 with its size."""

    def __init__(self) -> None:
        self.called = False
        self.body = b""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.called = True
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(self.body)).encode()})


class SwallowsErrors(ReadsAll):
    """An app that turns any failure to read into its own 400 (as FastAPI's body parsing does)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except Exception:
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"bad"})


def limited(app: Any, default: int = 25, *routes: RouteLimit) -> BodyLimitMiddleware:
    return BodyLimitMiddleware(app, limits=BodyLimits(default=default, routes=routes))


async def test_a_declared_length_above_the_limit_is_refused_unread() -> None:
    app, client = ReadsAll(), Client([b"x" * 100], declared=100)
    await limited(app)(client.scope(), client.receive, client.send)
    assert not app.called
    assert client.reads == 0
    assert client.status == 413
    assert client.header(b"content-type") == b"application/json"
    assert client.json() == {
        "error": "payload_too_large",
        "message": "request body is larger than 25 bytes",
        "details": [{"field": "body", "message": "at most 25 bytes"}],
    }


async def test_an_undeclared_body_is_cut_at_the_read_that_crosses_the_limit() -> None:
    app, client = ReadsAll(), Client([b"x" * 10] * 100)  # chunked: no Content-Length
    await limited(app)(client.scope(), client.receive, client.send)
    assert client.reads == 3  # 10, 20, 30 > 25: nothing read after that
    assert app.body == b"x" * 20
    assert client.status == 413
    assert [m["type"] for m in client.sent] == ["http.response.start", "http.response.body"]
    assert client.json()["error"] == "payload_too_large"


async def test_a_lying_content_length_is_counted_too() -> None:
    app, client = ReadsAll(), Client([b"x" * 10] * 5, declared=10)
    await limited(app)(client.scope(), client.receive, client.send)
    assert client.reads == 3
    assert client.status == 413


async def test_the_apps_own_answer_to_the_aborted_read_is_replaced() -> None:
    app, client = SwallowsErrors(), Client([b"x" * 20] * 3)
    await limited(app)(client.scope(), client.receive, client.send)
    assert client.status == 413
    assert len(client.sent) == 2


async def test_a_body_up_to_the_limit_passes_untouched() -> None:
    app, client = ReadsAll(), Client([b"x" * 5] * 5, declared=25)
    await limited(app)(client.scope(), client.receive, client.send)
    assert client.status == 200
    assert app.body == b"x" * 25


async def test_other_errors_of_the_app_are_not_hidden() -> None:
    async def broken(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("boom")

    client = Client([b"x"])
    with pytest.raises(RuntimeError):
        await limited(broken)(client.scope(), client.receive, client.send)


async def test_websockets_and_lifespan_pass_through() -> None:
    app = ReadsAll()
    client = Client([b"x" * 100])
    await limited(app, 1)(client.scope(kind="websocket"), client.receive, client.send)
    assert app.called and client.status == 200


async def test_routes_pick_their_limit() -> None:
    limits = BodyLimits(
        default=10,
        routes=(
            RouteLimit("/auth/*", 1),
            RouteLimit("/api/jobs", 100),
            RouteLimit("/api/dead-letters/{id}/requeue", 50),
        ),
    )
    assert limits.for_path("/auth/login") == 1
    assert limits.for_path("/auth/a/b") == 1
    assert limits.for_path("/auth") == 10  # the prefix itself is not below it
    assert limits.for_path("/api/jobs") == 100
    assert limits.for_path("/api/jobs/") == 100
    assert limits.for_path("/api/jobs/x/cancel") == 10
    assert limits.for_path("/api/dead-letters/abc/requeue") == 50
    assert limits.for_path("/api/dead-letters//requeue") == 10  # an empty segment is no id
    assert limits.for_path("/api/dead-letters/abc/discard") == 10
    assert limits.for_path("/") == 10
    client = Client([b"x" * 60], declared=60)
    app = ReadsAll()
    await BodyLimitMiddleware(app, limits=limits)(
        client.scope("/api/dead-letters/abc/requeue"), client.receive, client.send
    )
    assert client.status == 413 and not app.called
    with pytest.raises(ValueError):
        RouteLimit("no-slash", 1)
    with pytest.raises(ValueError):
        RouteLimit("/x", -1)


def test_the_default_limits_fit_what_they_carry() -> None:
    assert AUTH_MAX_BODY_BYTES <= 8 * 1024
    assert DEFAULT_MAX_BODY_BYTES < JOB_MAX_BODY_BYTES <= BATCH_MAX_BODY_BYTES
    # the largest image a job may carry: services/worker/tests/unit/test_worker_payload_models.py


async def test_a_fastapi_app_answers_413_for_a_chunked_body_it_reads() -> None:
    app = FastAPI()
    install_error_handlers(app)
    app.add_middleware(BodyLimitMiddleware, limits=BodyLimits(default=1024))
    sent = 0

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    @app.post("/parsed")
    async def parsed(body: dict[str, Any]) -> dict[str, int]:
        return {"keys": len(body)}

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(100):
            sent += 1
            yield b"x" * 100

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        small = await client.post("/echo", content=b"x" * 1024)
        assert small.json() == {"size": 1024}
        cut = await client.post("/echo", content=chunks())
        assert cut.status_code == 413
        assert cut.json()["error"] == "payload_too_large"
        assert sent == 11  # 1,100 bytes crossed the limit: no chunk read after that
        sent = 0
        # FastAPI reads a declared body itself (and would answer 400 for a failed read)
        body_param = await client.post(
            "/parsed", content=chunks(), headers={"content-type": "application/json"}
        )
        assert body_param.status_code == 413
