"""Pure ASGI middleware: request id and trace id on every request and response (both bound to
the log context, so every line written while serving it carries them; the proxy forwards both
to the backends), the request log line, and a last resort 500 envelope (so even an unexpected
failure carries its X-Request-Id). Request metrics are the shared middleware's
(``jobs_common.http_metrics``), wired outside this one."""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jobs_common.body_limit import send_json
from jobs_common.errors import ErrorEnvelope
from jobs_common.http_metrics import route_template
from jobs_common.log_context import bind, trace_id_from_headers
from jobs_gateway.domain.headers import REQUEST_ID_HEADER, TRACE_ID_HEADER

log = logging.getLogger(__name__)

_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def incoming_request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == REQUEST_ID_HEADER.encode():
            candidate: str = value.decode("latin-1")
            if _VALID_REQUEST_ID.match(candidate):
                return candidate
            break
    return uuid.uuid4().hex


def incoming_trace_id(scope: Scope) -> str:
    """The client's ``X-Trace-Id`` (or ``traceparent`` trace id) if valid, else a new one."""
    return trace_id_from_headers(scope.get("headers", [])) or uuid.uuid4().hex


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = incoming_request_id(scope)
        trace_id = incoming_trace_id(scope)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["trace_id"] = trace_id
        with bind(request_id=request_id, trace_id=trace_id):
            await self._serve(scope, receive, send, request_id, trace_id)

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, request_id: str, trace_id: str
    ) -> None:
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in (REQUEST_ID_HEADER.encode(), TRACE_ID_HEADER.encode())
                ]
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                headers.append((TRACE_ID_HEADER.encode(), trace_id.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            log.error(
                "unhandled error",
                extra={"action": "http_error", "request_id": request_id},
                exc_info=exc,
            )
            if response_started:
                raise
            status = 500
            envelope = ErrorEnvelope(error="internal_error", message="internal error")
            await send_json(send_with_id, 500, envelope.model_dump())
        finally:
            route = route_template(scope)
            method = scope.get("method", "")
            elapsed = time.perf_counter() - started
            log.info(
                "request",
                extra={
                    "action": "http_request",
                    "method": method,
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                    "request_id": request_id,
                },
            )
