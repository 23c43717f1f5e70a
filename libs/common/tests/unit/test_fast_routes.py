"""Fast routes (``jobs_common.fast_routes``) on a real FastAPI app driven in-process: a hot
path answered by its plain handler once FastAPI routed one request there, never a path an
earlier route declares, labelled by the route's template, errors in the envelope."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from prometheus_client import REGISTRY

from jobs_common.error_handlers import install_error_handlers
from jobs_common.errors import Conflict
from jobs_common.fast_routes import FastRoute, install_fast_routes
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.json_response import JsonResponse

pytestmark = pytest.mark.unit


class Served:
    """Which handler answered each request: the route's (FastAPI) or the fast one."""

    def __init__(self) -> None:
        self.by: list[str] = []

    async def fast(self, request: Request) -> Response:
        self.by.append("fast")
        kind = request.headers.get("x-kind")
        if kind == "conflict":
            raise Conflict("taken")
        if kind == "crash":
            raise RuntimeError("boom")
        return JsonResponse({"path": request.url.path}, status_code=202)


def make_app(served: Served) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    install_fast_routes(
        app,
        [
            FastRoute("POST", "/t-fast/jobs", route_name="catch_all", handler=served.fast),
            # An earlier route declares this path: FastAPI never routes it to catch_all.
            FastRoute("POST", "/t-fast/own", route_name="catch_all", handler=served.fast),
        ],
    )
    app.add_middleware(HttpMetricsMiddleware)

    @app.post("/t-fast/own", status_code=201)
    async def own() -> dict[str, str]:
        served.by.append("own")
        return {"path": "own"}

    @app.post("/t-fast/{rest:path}", status_code=202, name="catch_all")
    async def catch_all(rest: str, request: Request) -> dict[str, str]:
        served.by.append("route")
        return {"path": request.url.path}

    return app


def counted(route: str, status: int) -> float:
    labels = {"route": route, "method": "POST", "status": str(status)}
    return REGISTRY.get_sample_value("http_requests_total", labels) or 0.0


async def client_of(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


async def test_the_fast_handler_answers_once_fastapi_routed_the_path_to_its_route() -> None:
    served = Served()
    before = counted("/t-fast/{rest}", 202)
    async with await client_of(make_app(served)) as client:
        answers = [await client.post("/t-fast/jobs") for _ in range(3)]
        other = await client.post("/t-fast/other")  # not a fast path: FastAPI's route
    assert [a.status_code for a in answers] == [202, 202, 202]
    assert all(a.json() == {"path": "/t-fast/jobs"} for a in answers)
    assert served.by == ["route", "fast", "fast", "route"]
    assert other.json() == {"path": "/t-fast/other"}
    # Labelled by the template of the route FastAPI chose, as the route's own answers are.
    assert counted("/t-fast/{rest}", 202) == before + 4


async def test_a_path_an_earlier_route_declares_is_never_taken() -> None:
    served = Served()
    async with await client_of(make_app(served)) as client:
        answers = [await client.post("/t-fast/own") for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 201]
    assert served.by == ["own", "own", "own"]


async def test_errors_are_answered_by_the_apps_handlers_and_the_unexpected_passes_on() -> None:
    served = Served()
    app = make_app(served)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        await client.post("/t-fast/jobs")  # FastAPI routes the first
        conflict = await client.post("/t-fast/jobs", headers={"x-kind": "conflict"})
        crash = await client.post("/t-fast/jobs", headers={"x-kind": "crash"})
        unknown = await client.get("/t-fast/jobs")  # another method: FastAPI's 405
    assert served.by == ["route", "fast", "fast"]
    assert conflict.status_code == 409
    assert conflict.json() == {"error": "conflict", "message": "taken", "details": []}
    assert crash.status_code == 500
    assert crash.json() == {"error": "internal_error", "message": "internal error", "details": []}
    assert unknown.status_code == 405


def test_installing_after_the_app_served_is_refused() -> None:
    app = FastAPI()
    app.middleware_stack = app.build_middleware_stack()
    with pytest.raises(RuntimeError, match="before the app starts"):
        install_fast_routes(app, [])
