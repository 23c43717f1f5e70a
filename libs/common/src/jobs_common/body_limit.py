"""Request body limits per route: a pure ASGI middleware that never buffers.

A request whose ``Content-Length`` is above its route's limit is refused at once (413, the
error envelope) without reading a byte of it. Any other request (a chunked one has no
``Content-Length``) has its bytes counted as ``receive()`` yields them; the read that crosses
the limit raises :class:`~jobs_common.errors.PayloadTooLarge` inside the app, whatever the app
then answers is dropped and the client gets the 413 instead. The app never reads past the
limit; the server (uvicorn) discards what the client still sends, without keeping it, so the
client reads its 413 (a server that closed at once would reset the connection under a client
still uploading, which would see a broken connection instead).

Wire it inside the request-id and metrics middlewares (``add_middleware`` it first), so a 413
carries the request id and is counted like any other answer.

The defaults below are the platform's: each service reads its own from its settings, and the
gateway's limit for a route is at least the backend's, so the backend's per-field errors (422)
reach the client rather than the gateway's 413.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jobs_common.errors import ErrorDetail, PayloadTooLarge

KIB = 1024
MIB = 1024 * KIB

DEFAULT_MAX_BODY_BYTES = 1 * MIB
"""Any route not listed otherwise: commands, selectors (up to 10,000 ids), small objects."""
AUTH_MAX_BODY_BYTES = 4 * KIB
"""Login, register, refresh: an email, a password, a token."""
JOB_MAX_BODY_BYTES = 8 * MIB
"""One job (or one edited payload): an image_resize payload carries up to 5 MB as base64."""
BATCH_MAX_BODY_BYTES = 16 * MIB
"""One batch of up to 10,000 job specs."""


@dataclass(frozen=True)
class RouteLimit:
    """``path`` is a path template: ``{name}`` matches one segment, a final ``/*`` any rest
    (``/auth/*`` matches ``/auth/login``); anything else must be equal. A trailing slash of the
    request's path is ignored."""

    path: str
    max_bytes: int

    def __post_init__(self) -> None:
        if self.max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        if not self.path.startswith("/"):
            raise ValueError("a route limit's path starts with /")

    def matches(self, path: str) -> bool:
        wanted = self.path.rstrip("/").split("/")
        given = path.rstrip("/").split("/")
        if wanted[-1] == "*":
            wanted = wanted[:-1]
            if len(given) <= len(wanted):
                return False
            given = given[: len(wanted)]
        if len(wanted) != len(given):
            return False
        return all(
            (part.startswith("{") and part.endswith("}") and bool(segment)) or part == segment
            for part, segment in zip(wanted, given, strict=True)
        )


@dataclass(frozen=True)
class BodyLimits:
    """The limit of every route: the first matching :class:`RouteLimit`, else ``default``."""

    default: int = DEFAULT_MAX_BODY_BYTES
    routes: Sequence[RouteLimit] = ()

    def __post_init__(self) -> None:
        if self.default < 0:
            raise ValueError("default must be >= 0")

    def for_path(self, path: str) -> int:
        for route in self.routes:
            if route.matches(path):
                return route.max_bytes
        return self.default


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length``, or None when absent or not a number (then the bytes
    are counted as they come; the server has refused a malformed one already)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


def too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"request body is larger than {limit} bytes",
        details=[ErrorDetail(field="body", message=f"at most {limit} bytes")],
    )


async def send_json(send: Send, status: int, document: object) -> None:
    """A whole JSON response sent on raw ASGI (middlewares answering before or instead of
    the app)."""
    body = orjson.dumps(document)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_too_large(send: Send, limit: int) -> None:
    await send_json(send, 413, too_large(limit).envelope())


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, *, limits: BodyLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.for_path(scope["path"])
        declared = declared_length(scope)
        if declared is not None and declared > limit:
            await send_too_large(send, limit)
            return
        received = 0
        exceeded = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise too_large(limit)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise too_large(limit)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:
                return  # the app's answer to the aborted read: the client gets the 413
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not exceeded or started:
                raise
        if exceeded and not started:
            await send_too_large(send, limit)
