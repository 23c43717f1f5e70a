"""Every route refuses input the stores cannot hold (``jobs_common.storable_text``): a NUL or
a lone surrogate anywhere in the URL, a header or a JSON body.

:func:`install_storable_input` (called by ``error_handlers.install_error_handlers``, so every
service's app has it) wires two parts:

- :class:`StorableUrlMiddleware`, a pure ASGI middleware, checks the path, the query string
  and the header values of every HTTP request before any route sees them: a NUL (``%00``)
  is ``422 validation_error`` naming the parameter or header, a percent-encoded byte
  sequence that is not UTF-8 (how a URL would carry a surrogate) is ``400 bad_request``.
  Bytes only, nothing decoded unless a ``%`` is there.
- :func:`refuse_unstorable_body`, an app-wide dependency, walks the JSON body FastAPI decoded
  for the route (its ``json`` decodes ``"\\ud800"`` into a lone surrogate), before the
  route's own dependencies run. It decodes nothing itself: the request caches the body
  FastAPI decoded. Routes that read their body themselves (the submission's) decode it
  with :func:`jobs_common.storable_text.decode_json`, which checks it.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from starlette.requests import HTTPConnection, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from jobs_common.body_limit import send_json
from jobs_common.errors import BadRequest, ErrorDetail, PlatformError, ValidationFailed
from jobs_common.storable_text import NUL_MESSAGE, refuse_unstorable

NOT_UTF8 = "is not UTF-8 text once percent-decoded"


def _nul(field: str) -> PlatformError:
    return ValidationFailed(
        "request validation failed", details=[ErrorDetail(field=field, message=NUL_MESSAGE)]
    )


def _not_utf8(field: str) -> PlatformError:
    return BadRequest(f"{field} {NOT_UTF8}", details=[ErrorDetail(field=field, message=NOT_UTF8)])


def _decoded(raw: bytes, *, plus_is_space: bool) -> bytes:
    if plus_is_space:
        raw = raw.replace(b"+", b" ")
    return unquote_to_bytes(raw) if b"%" in raw else raw


def url_problem(scope: Scope) -> PlatformError | None:
    """What is wrong with the request's path, query string or headers, or ``None``."""
    raw_path: bytes = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "replace")
    path = _decoded(raw_path.split(b"?", 1)[0], plus_is_space=False)
    if b"\x00" in path:
        return _nul("path")
    if not path.isascii():
        try:
            path.decode("utf-8")
        except UnicodeDecodeError:
            return _not_utf8("path")
    query: bytes = scope.get("query_string", b"")
    if query and (b"%" in query or not query.isascii()):
        for pair in query.split(b"&"):
            name, _, value = pair.partition(b"=")
            field = _decoded(name, plus_is_space=True)
            label = field.decode("utf-8", "backslashreplace").replace("\x00", "\\x00") or "query"
            for part in (field, _decoded(value, plus_is_space=True)):
                if b"\x00" in part:
                    return _nul(label)
                if not part.isascii():
                    try:
                        part.decode("utf-8")
                    except UnicodeDecodeError:
                        return _not_utf8(label)
    for name, value in scope.get("headers", ()):
        if b"\x00" in value or b"\x00" in name:
            return _nul(header_label(name))
    return None


def header_label(name: bytes) -> str:
    """``idempotency-key`` -> ``Idempotency-Key``: as the routes' header parameters are named."""
    text = name.replace(b"\x00", b"").decode("latin-1")
    return "-".join(part.capitalize() for part in text.split("-"))


class StorableUrlMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (problem := url_problem(scope)) is not None:
            await send_json(send, problem.status_code, problem.envelope())
            return
        await self.app(scope, receive, send)


async def refuse_unstorable_body(connection: HTTPConnection) -> None:
    """The JSON body FastAPI decoded for this route, checked (nothing for routes without a
    body model, WebSockets, and bodies FastAPI could not decode: it answers those)."""
    route = connection.scope.get("route")
    if not isinstance(connection, Request) or not isinstance(route, APIRoute):
        return
    if route.body_field is None:
        return
    try:
        body = await connection.json()  # cached: the value FastAPI validates
    except ValueError:
        return
    refuse_unstorable(body)


def install_storable_input(app: FastAPI) -> None:
    """Before any route is added (a route takes the app's dependencies when it is included)."""
    app.router.dependencies.append(Depends(refuse_unstorable_body))
    app.add_middleware(StorableUrlMiddleware)
