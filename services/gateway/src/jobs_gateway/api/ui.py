"""The web UI, built by ``npm run build`` into ``frontend/dist``, served at ``/`` from the same
origin as the API (so the browser needs no CORS).

A file of the build answers its own path; any other path that is not the API's answers the
app's ``index.html`` (the browser router's routes, e.g. ``/jobs/<id>``). Vite names assets by
their content hash, so ``/assets/*`` are cached for a year; ``index.html`` is revalidated on
every load so a new build shows at once.

The UI answers GET and HEAD only: any other method on its paths is a 405. On a path it leaves
to the API (``RESERVED``), a method no route takes there is a 405 naming those that do, or a
404 where none does.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NoReturn

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from jobs_common.error_handlers import allowed_methods
from jobs_common.errors import MethodNotAllowed, NotFound

log = logging.getLogger(__name__)

# Paths the UI never answers: unknown ones there keep the API's JSON 404.
RESERVED = ("api", "auth", "ws", "docs", "redoc", "openapi.json", "health", "ready", "metrics")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
UI_METHODS = ("GET", "HEAD")


def reserved(path: str) -> bool:
    first = path.split("/", 1)[0]
    return first in RESERVED


def resolve_file(root: Path, path: str) -> Path | None:
    """The build's file at ``path``, or None (also for anything outside ``root``)."""
    candidate = (root / path).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


class AsgiEndpoint:
    """Wraps an ASGI function so that Starlette's ``Route`` treats it as an app (which takes
    every method) rather than as a ``request -> response`` function (GET only)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def install_ui(app: FastAPI, directory: Path | None) -> bool:
    """Serve the build in ``directory`` at ``/`` if it holds one; returns whether it does.
    Call after every other route is added: this one takes what they leave."""
    if directory is None:
        return False
    root = directory.resolve()
    index = root / "index.html"
    if not index.is_file():
        log.warning(
            "no web UI build; run `npm run build` in frontend/",
            extra={"action": "ui_missing", "directory": str(root)},
        )
        return False

    own: list[BaseRoute] = []

    def not_ours(request: Request) -> NoReturn:
        """A reserved path: 405 if another route takes it with other methods, else 404."""
        others = [route for route in request.app.router.routes if route not in own]
        if allow := allowed_methods(others, request.scope):
            raise MethodNotAllowed("method not allowed", allow=allow)
        raise NotFound("no such route")

    async def ui(request: Request, path: str = "") -> Response:
        if reserved(path):
            not_ours(request)
        found = resolve_file(root, path) if path else None
        if found is not None:
            cache = IMMUTABLE if path.startswith("assets/") else REVALIDATE
            return FileResponse(found, headers={"Cache-Control": cache})
        if "." in path.rsplit("/", 1)[-1]:
            raise NotFound("no such file")  # a missing asset is a 404, not the app
        return FileResponse(index, headers={"Cache-Control": REVALIDATE})

    async def other_method(scope: Scope, receive: Receive, send: Send) -> None:
        """Every other method (an ASGI endpoint: its route takes any method, even odd ones)."""
        request = Request(scope, receive)
        if reserved(str(request.path_params.get("path", ""))):
            not_ours(request)
        raise MethodNotAllowed("method not allowed", allow=UI_METHODS)

    first = len(app.router.routes)
    for route in ("/", "/{path:path}"):
        app.add_api_route(route, ui, methods=list(UI_METHODS), include_in_schema=False)
    for route in ("/", "/{path:path}"):  # after the GET/HEAD ones
        app.router.routes.append(Route(route, AsgiEndpoint(other_method), include_in_schema=False))
    own.extend(app.router.routes[first:])
    log.info("serving the web UI", extra={"action": "ui", "directory": str(root)})
    return True
