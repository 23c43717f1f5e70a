"""Pure ASGI middleware: request id on every request and response, request metrics, and a last
resort 500 envelope (so even an unexpected failure carries its X-Request-Id)."""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jobs_common.errors import ErrorEnvelope
from jobs_gateway.domain.headers import REQUEST_ID_HEADER
from jobs_gateway.metrics import HTTP_DURATION, HTTP_REQUESTS

log = logging.getLogger(__name__)

_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
_CONVERTER = re.compile(r"\{(\w+):\w+\}")
UNMATCHED = "unmatched"


def incoming_request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == REQUEST_ID_HEADER.encode():
            candidate: str = value.decode("latin-1")
            if _VALID_REQUEST_ID.match(candidate):
                return candidate
            break
    return uuid.uuid4().hex


def route_template(scope: Scope) -> str:
    state: dict[str, Any] = scope.get("state") or {}
    if template := state.get("route_template"):
        return str(template)
    route = scope.get("route")
    path = getattr(route, "path", None)
    return _CONVERTER.sub(r"{\1}", str(path)) if path else UNMATCHED


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = incoming_request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
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
                    if k.lower() != REQUEST_ID_HEADER.encode()
                ]
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
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
            body = orjson.dumps(
                ErrorEnvelope(error="internal_error", message="internal error").model_dump()
            )
            await send_with_id(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send_with_id({"type": "http.response.body", "body": body})
        finally:
            route = route_template(scope)
            method = scope.get("method", "")
            elapsed = time.perf_counter() - started
            HTTP_REQUESTS.labels(route, method, str(status)).inc()
            HTTP_DURATION.labels(route, method, str(status)).observe(elapsed)
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
