"""Request metrics of every HTTP service: ``http_requests_total{route,method,status}`` and
``http_request_duration_seconds{route,method}``, labelled by the matched route's template
(``/api/jobs/{jobId}``), never the raw path, so the series stay bounded.

A pure ASGI middleware (no body buffering); wire it last (outermost) in ``create_app`` so it
also counts what the other middlewares answer themselves (CORS preflights, a last-resort 500).
"""

from __future__ import annotations

import re
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jobs_common.metrics import HTTP_REQUEST_DURATION, HTTP_REQUESTS

UNMATCHED = "unmatched"
_CONVERTER = re.compile(r"\{(\w+):\w+\}")


def route_template(scope: Scope) -> str:
    """The label of a request: a template a route set on ``request.state.route_template`` (a
    catch-all proxy naming the route it forwards to), else the matched route's path template
    without converters (``/api/{path:path}`` -> ``/api/{path}``), else ``unmatched``."""
    state: dict[str, Any] = scope.get("state") or {}
    if template := state.get("route_template"):
        return str(template)
    path = getattr(scope.get("route"), "path", None)
    return _CONVERTER.sub(r"{\1}", path) if isinstance(path, str) and path else UNMATCHED


class HttpMetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the client gets when the app raises before answering
        started = time.perf_counter()

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            route, method = route_template(scope), str(scope.get("method", ""))
            HTTP_REQUESTS.labels(route, method, str(status)).inc()
            HTTP_REQUEST_DURATION.labels(route, method).observe(time.perf_counter() - started)
