"""Request metrics by route template (pure ASGI middleware: no body buffering)."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jobs_dashboard.metrics import HTTP_LATENCY, HTTP_REQUESTS

UNMATCHED = "unmatched"


def route_template(scope: Scope) -> str:
    """The matched route's path template (``/api/jobs/{jobId}``), never the raw path."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED


class RequestMetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route, method = route_template(scope), scope["method"]
            HTTP_REQUESTS.labels(route=route, method=method, status=str(status)).inc()
            HTTP_LATENCY.labels(route=route, method=method).observe(time.perf_counter() - started)
