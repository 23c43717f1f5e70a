"""``/health``, ``/ready`` and ``/metrics`` of every service, and the liveness watchdog that
runs while the app does."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel

from jobs_common.json_response import JsonResponse
from jobs_common.liveness import LiveCheck, Watchdog
from jobs_common.settings import ServiceSettings

ReadyCheck = Callable[[], Awaitable[dict[str, bool]]]
# What is wrong but leaves the service ready (for example ``autovacuum_off``).
Warnings = Callable[[], list[str]]


class HealthReport(BaseModel):
    """``/health``: ``ok``; ``recovering`` while own parts fail (still 200); ``unhealthy``
    (503) once one failed for ``giveUpAfterSeconds``: the process is exiting."""

    status: Literal["ok", "recovering", "unhealthy"]
    failing: list[str] | None = None
    failingForSeconds: float | None = None
    giveUpAfterSeconds: float | None = None


class ReadyReport(BaseModel):
    """``/ready``: ``ready`` (200) when every check passes, else ``not_ready`` (503); ``checks``
    names each dependency with whether it answered; ``warnings`` (absent when none) what an
    operator should mend although the service works."""

    status: Literal["ready", "not_ready"]
    checks: dict[str, bool]
    warnings: list[str] | None = None


def add_ops_routes(
    app: FastAPI,
    ready: ReadyCheck,
    *,
    live: LiveCheck | None = None,
    settings: ServiceSettings | None = None,
    metrics: bool = True,
    warnings: Warnings | None = None,
) -> None:
    """/health (liveness: the process and its own parts), /ready (its dependencies answer),
    /metrics (unless ``metrics`` is false: the gateway serves its metrics on a port of their
    own). With ``live`` (the service's own parts: broker channels, consumers, loops), a
    :class:`~jobs_common.liveness.Watchdog` runs while the app does: /health reports a part
    failing, and the process exits once one failed for ``settings.liveness_give_up_seconds``.
    ``warnings`` are carried by /ready without making it fail."""
    watchdog: Watchdog | None = None
    if live is not None:
        options = settings or ServiceSettings()
        watchdog = Watchdog(
            live,
            give_up_after=options.liveness_give_up_seconds,
            interval=options.liveness_interval_seconds,
        )
        _run_with_app(app, watchdog)
    app.state.watchdog = watchdog

    @app.get(
        "/health",
        tags=["ops"],
        response_model=HealthReport,
        response_model_exclude_none=True,
        responses={503: {"model": HealthReport, "description": "Gave up: the process exits"}},
    )
    async def health() -> JsonResponse:
        status, body = watchdog.report() if watchdog is not None else (200, {"status": "ok"})
        return JsonResponse(body, status_code=status)

    @app.get(
        "/ready",
        tags=["ops"],
        response_model=ReadyReport,
        response_model_exclude_none=True,
        responses={503: {"model": ReadyReport, "description": "A dependency is not ready"}},
    )
    async def readiness() -> JsonResponse:
        checks = await ready()
        ok = all(checks.values())
        body: dict[str, Any] = {"status": "ready" if ok else "not_ready", "checks": checks}
        found = warnings() if warnings is not None else []
        if found:
            body["warnings"] = found
        return JsonResponse(body, status_code=200 if ok else 503)

    if metrics:
        app.add_api_route(
            "/metrics", metrics_endpoint, methods=["GET"], tags=["ops"], include_in_schema=False
        )


def _run_with_app(app: FastAPI, watchdog: Watchdog) -> None:
    """Start ``watchdog`` once the app's startup has run; stop it when the app stops."""
    startup = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(target: Any) -> AsyncIterator[Any]:
        async with startup(target) as state:
            watchdog.start()
            try:
                yield state
            finally:
                await watchdog.stop()

    app.router.lifespan_context = lifespan


async def metrics_endpoint() -> Response:
    """The process's Prometheus metrics (the default registry)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
