"""The log context of each HTTP request: the gateway's ``X-Request-Id`` and the trace id,
bound for every log line written while the request is served."""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from jobs_common.log_context import bind, trace_id_from_headers

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
