"""FastAPI wiring shared by every service: the error envelope, /health, /ready, /metrics, and
the log context of each request (:class:`LogContextMiddleware`)."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import orjson
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from jobs_common.auth import Identity, identity_from_headers
from jobs_common.errors import ErrorDetail, ErrorEnvelope, PlatformError
from jobs_common.liveness import LiveCheck, Watchdog
from jobs_common.log_context import bind, trace_id_from_headers
from jobs_common.settings import ServiceSettings

log = logging.getLogger(__name__)


class JsonResponse(Response):
    """A JSON response serialized with orjson (FastAPI's ORJSONResponse is deprecated)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def request_id_from_headers(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The ``X-Request-Id`` the gateway forwarded, if valid."""
    for name, value in headers:
        if name == b"x-request-id":
            candidate = value.decode("latin-1")
            return candidate if _VALID_REQUEST_ID.match(candidate) else None
    return None


class LogContextMiddleware:
    """Binds the request's ``request_id`` (the gateway's ``X-Request-Id``) and ``trace_id``
    (``X-Trace-Id``, else ``traceparent``) for every log line written while it is served."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", [])
        with bind(
            request_id=request_id_from_headers(headers), trace_id=trace_id_from_headers(headers)
        ):
            await self.app(scope, receive, send)


ReadyCheck = Callable[[], Awaitable[dict[str, bool]]]


def _field_path(loc: tuple[Any, ...]) -> str:
    """``("body", "payload", "body")`` -> ``payload.body``: only the location prefix is dropped."""
    if loc and loc[0] in ("body", "query", "path", "header"):
        loc = loc[1:]
    return ".".join(str(p) for p in loc) or "body"


def validation_details(errors: Any) -> list[ErrorDetail]:
    return [ErrorDetail(field=_field_path(tuple(e["loc"])), message=e["msg"]) for e in errors]


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> set[str]:
    """The methods some route answers at the request's path: a 405's ``Allow`` (Starlette
    names only the first partly matching route's; included routers are asked too)."""
    probe: Scope = {
        "type": "http",
        "path": scope["path"],
        "root_path": scope.get("root_path", ""),
        "headers": [],
        "query_string": b"",
    }
    routes = list(routes)
    return {
        method
        for method in HTTP_METHODS
        if any(route.matches({**probe, "method": method})[0] is Match.FULL for route in routes)
    }


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(PlatformError)
    async def _platform(_: Request, exc: PlatformError) -> JsonResponse:
        return JsonResponse(exc.envelope(), status_code=exc.status_code, headers=exc.headers())

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JsonResponse:
        body = ErrorEnvelope(
            error="validation_error",
            message="request validation failed",
            details=validation_details(exc.errors()),
        )
        return JsonResponse(body.model_dump(), status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JsonResponse:
        log.error("unhandled error", extra={"action": "http_error"}, exc_info=exc)
        body = ErrorEnvelope(error="internal_error", message="internal error")
        return JsonResponse(body.model_dump(), status_code=500)

    codes = {
        404: "not_found",
        405: "method_not_allowed",
        413: "payload_too_large",
        401: "unauthorized",
        403: "forbidden",
    }

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JsonResponse:
        code = codes.get(exc.status_code, "bad_request")
        body = ErrorEnvelope(error=code, message=str(exc.detail))
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            if allow := allowed_methods(request.app.router.routes, request.scope):
                headers["Allow"] = ", ".join(sorted(allow))
        return JsonResponse(body.model_dump(), status_code=exc.status_code, headers=headers)


class HealthReport(BaseModel):
    """``/health``: ``ok``; ``recovering`` while own parts fail (still 200); ``unhealthy``
    (503) once one failed for ``giveUpAfterSeconds``: the process is exiting."""

    status: Literal["ok", "recovering", "unhealthy"]
    failing: list[str] | None = None
    failingForSeconds: float | None = None
    giveUpAfterSeconds: float | None = None


def add_ops_routes(
    app: FastAPI,
    ready: ReadyCheck,
    *,
    live: LiveCheck | None = None,
    settings: ServiceSettings | None = None,
    metrics: bool = True,
) -> None:
    """/health (liveness: the process and its own parts), /ready (its dependencies answer),
    /metrics (unless ``metrics`` is false: the gateway serves its metrics on a port of their
    own). With ``live`` (the service's own parts: broker channels, consumers, loops), a
    :class:`~jobs_common.liveness.Watchdog` runs while the app does: /health reports a part
    failing, and the process exits once one failed for ``settings.liveness_give_up_seconds``."""
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

    @app.get("/ready", tags=["ops"])
    async def readiness() -> JsonResponse:
        checks = await ready()
        ok = all(checks.values())
        return JsonResponse(
            {"status": "ready" if ok else "not_ready", "checks": checks},
            status_code=200 if ok else 503,
        )

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


async def current_identity(request: Request) -> Identity:
    """Reads the identity using the internal token stored on ``app.state.internal_token``."""
    return identity_from_headers(
        dict(request.headers),
        internal_token=request.app.state.internal_token,
        previous=getattr(request.app.state, "previous_internal_tokens", ()),
    )


CurrentIdentity = Annotated[Identity, Depends(current_identity)]
