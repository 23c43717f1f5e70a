"""The body limit behind a real HTTP server (uvicorn, as every service runs): a client that
declares a large body, or streams one chunked, gets the 413 envelope over the socket (the
server discards the rest of the upload), and the next request is served."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI, Request

from jobs_common.body_limit import BodyLimitMiddleware, BodyLimits, RouteLimit
from jobs_common.error_handlers import install_error_handlers
from jobs_testing.asgi_server import serve_app
from jobs_testing.infra import free_port

pytestmark = pytest.mark.integration

LIMIT = 64 * 1024


def make_app() -> tuple[FastAPI, list[int]]:
    app = FastAPI()
    install_error_handlers(app)
    limits = BodyLimits(default=LIMIT, routes=(RouteLimit("/small", 16),))
    app.add_middleware(BodyLimitMiddleware, limits=limits)
    read: list[int] = []

    @app.post("/echo")
    @app.post("/small")
    async def echo(request: Request) -> dict[str, int]:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            read.append(size)
        return {"size": size}

    return app, read


async def test_a_real_server_refuses_declared_and_chunked_bodies_above_the_limit() -> None:
    app, read = make_app()

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(1_000):  # 16 MB: the server discards what follows the limit
            yield b"x" * (16 * 1024)

    async with (
        serve_app(app, free_port(), http="auto") as url,
        httpx.AsyncClient(base_url=url, timeout=30) as client,
    ):
        fine = await client.post("/echo", content=b"x" * LIMIT)
        assert fine.json() == {"size": LIMIT}

        declared = await client.post("/echo", content=b"x" * (4 * 1024 * 1024))
        assert declared.status_code == 413
        assert declared.json()["error"] == "payload_too_large"

        read.clear()
        chunked = await client.post("/echo", content=chunks())
        assert chunked.status_code == 413, chunked.text
        assert chunked.json()["details"] == [{"field": "body", "message": f"at most {LIMIT} bytes"}]
        assert read == [] or max(read) <= LIMIT  # the app never saw a byte past the limit

        small = await client.post("/small", content=b"x" * 17)
        assert small.status_code == 413
        assert (await client.post("/small", content=b"x" * 16)).json() == {"size": 16}
