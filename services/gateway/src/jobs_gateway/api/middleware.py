"""Pure ASGI middleware: request id on every request and response, the request log line, and a
last resort 500 envelope (so even an unexpected failure carries its X-Request-Id). Request
metrics are the shared middleware's (``jobs_common.http_metrics``), wired outside this one."""

from __future__ import annotations

import logging
import re
import time
import uuid

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jobs_common.errors import ErrorEnvelope
from jobs_common.http_metrics import route_template
from jobs_gateway.domain.headers import REQUEST_ID_HEADER

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
