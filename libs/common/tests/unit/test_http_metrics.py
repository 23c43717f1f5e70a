"""The shared request metrics: route templates as labels, the status the client got, and
latency, on a real FastAPI app driven in-process (no network)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from prometheus_client import REGISTRY

from jobs_common.error_handlers import install_error_handlers
from jobs_common.http_metrics import UNMATCHED, HttpMetricsMiddleware, route_template

pytestmark = pytest.mark.unit


def requests(route: str, method: str, status: int) -> float:
    labels = {"route": route, "method": method, "status": str(status)}
    return REGISTRY.get_sample_value("http_requests_total", labels) or 0.0


def timed(route: str, method: str) -> float:
    labels = {"route": route, "method": method}
    return REGISTRY.get_sample_value("http_request_duration_seconds_count", labels) or 0.0


def make_app() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.add_middleware(HttpMetricsMiddleware)

    @app.get("/t-metrics/items/{itemId}")
    async def item(itemId: str) -> dict[str, str]:
        return {"id": itemId}

    @app.get("/t-metrics/files/{rest:path}")
    async def files(rest: str) -> dict[str, str]:
        return {"rest": rest}

    @app.get("/t-metrics/proxy/{rest:path}")
    async def proxy(rest: str, request: Request) -> dict[str, str]:
        request.state.route_template = "/t-metrics/proxy/jobs/{jobId}"
        return {"rest": rest}

    @app.post("/t-metrics/broken")
    async def broken() -> None:
        raise RuntimeError("boom")

    return app


async def test_requests_are_counted_by_route_template_method_and_status() -> None:
    before = {
        "item": requests("/t-metrics/items/{itemId}", "GET", 200),
        "files": requests("/t-metrics/files/{rest}", "GET", 200),
        "proxy": requests("/t-metrics/proxy/jobs/{jobId}", "GET", 200),
        "broken": requests("/t-metrics/broken", "POST", 500),
        "unmatched": requests(UNMATCHED, "GET", 404),
        "timed": timed("/t-metrics/items/{itemId}", "GET"),
    }
    transport = httpx.ASGITransport(app=make_app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/t-metrics/items/42")).status_code == 200
        assert (await client.get("/t-metrics/items/43")).status_code == 200
        assert (await client.get("/t-metrics/files/a/b.txt")).status_code == 200
        assert (await client.get("/t-metrics/proxy/jobs/j-1")).status_code == 200
        assert (await client.post("/t-metrics/broken")).status_code == 500
        assert (await client.get("/t-metrics/nowhere/7")).status_code == 404

    assert requests("/t-metrics/items/{itemId}", "GET", 200) == before["item"] + 2
    assert requests("/t-metrics/files/{rest}", "GET", 200) == before["files"] + 1
    assert requests("/t-metrics/proxy/jobs/{jobId}", "GET", 200) == before["proxy"] + 1
    assert requests("/t-metrics/broken", "POST", 500) == before["broken"] + 1
    assert requests(UNMATCHED, "GET", 404) == before["unmatched"] + 1
    assert timed("/t-metrics/items/{itemId}", "GET") == before["timed"] + 2
    exposed = {
        sample.labels.get("route")
        for family in REGISTRY.collect()
        if family.name == "http_requests"
        for sample in family.samples
    }
    assert not any(route and ("42" in route or "a/b.txt" in route) for route in exposed)


class Route:
    def __init__(self, path: str) -> None:
        self.path = path


@pytest.mark.parametrize(
    ("scope", "label"),
    [
        ({"route": Route("/api/jobs/{jobId}")}, "/api/jobs/{jobId}"),
        ({"route": Route("/api/{path:path}")}, "/api/{path}"),
        (
            {"route": Route("/api/{path:path}"), "state": {"route_template": "/api/jobs"}},
            "/api/jobs",
        ),
        ({"route": Route("")}, UNMATCHED),
        ({}, UNMATCHED),
    ],
)
def test_route_labels(scope: dict[str, Any], label: str) -> None:
    assert route_template(scope) == label


async def test_websockets_and_lifespan_pass_through_uncounted() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    before = sum(
        sample.value
        for family in REGISTRY.collect()
        if family.name == "http_requests"
        for sample in family.samples
        if sample.name == "http_requests_total"
    )
    middleware = HttpMetricsMiddleware(app)
    await middleware({"type": "websocket", "path": "/ws"}, None, None)  # type: ignore[arg-type]
    await middleware({"type": "lifespan"}, None, None)  # type: ignore[arg-type]
    after = sum(
        sample.value
        for family in REGISTRY.collect()
        if family.name == "http_requests"
        for sample in family.samples
        if sample.name == "http_requests_total"
    )
    assert seen == ["websocket", "lifespan"]
    assert after == before
