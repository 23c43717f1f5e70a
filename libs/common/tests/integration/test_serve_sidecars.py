"""A service with a sidecar: two real uvicorn servers in one event loop, each on its own port
of the service's host; the sidecar stops when the service does."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from jobs_common.serve import Sidecar, serve_together, servers
from jobs_common.settings import ServiceSettings
from jobs_testing.infra import free_port
from jobs_testing.waiting import eventually

pytestmark = pytest.mark.integration


async def side(_: Request) -> PlainTextResponse:
    return PlainTextResponse("side")


async def test_a_sidecar_serves_on_its_port_and_stops_with_the_service() -> None:
    app = FastAPI()

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    settings = ServiceSettings(host="127.0.0.1", port=free_port())
    sidecar_port = free_port()
    main, extra = servers(
        app, settings, [Sidecar(Starlette(routes=[Route("/side", side)]), sidecar_port)]
    )
    running = asyncio.create_task(serve_together(main, extra))

    async def started() -> bool:
        return main.started and all(server.started for server in extra)

    await eventually(started, what="both servers started")
    async with httpx.AsyncClient(timeout=5) as client:
        service = f"http://127.0.0.1:{settings.port}"
        sidecar = f"http://127.0.0.1:{sidecar_port}"
        assert (await client.get(f"{service}/hello")).json() == {"hello": "world"}
        assert (await client.get(f"{service}/side")).status_code == 404
        assert (await client.get(f"{sidecar}/side")).text == "side"
        assert (await client.get(f"{sidecar}/hello")).status_code == 404

        main.should_exit = True
        async with asyncio.timeout(10):
            await running
        with pytest.raises(httpx.ConnectError):
            await client.get(f"{sidecar}/side")
