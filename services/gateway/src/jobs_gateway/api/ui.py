"""The web UI, built by ``npm run build`` into ``frontend/dist``, served at ``/`` from the same
origin as the API (so the browser needs no CORS).

A file of the build answers its own path; any other path that is not the API's answers the
app's ``index.html`` (the browser router's routes, e.g. ``/jobs/<id>``). Vite names assets by
their content hash, so ``/assets/*`` are cached for a year; ``index.html`` is revalidated on
every load so a new build shows at once.
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response

from jobs_common.errors import NotFound

log = logging.getLogger(__name__)

# Paths the UI never answers: unknown ones there keep the API's JSON 404.
RESERVED = ("api", "auth", "ws", "docs", "redoc", "openapi.json", "health", "ready", "metrics")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def reserved(path: str) -> bool:
    first = path.split("/", 1)[0]
    return first in RESERVED


def resolve_file(root: Path, path: str) -> Path | None:
    """The build's file at ``path``, or None (also for anything outside ``root``)."""
    candidate = (root / path).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


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

    async def ui(request: Request, path: str = "") -> Response:
        if reserved(path):
            raise NotFound("no such route")
        found = resolve_file(root, path) if path else None
        if found is not None:
            cache = IMMUTABLE if path.startswith("assets/") else REVALIDATE
            return FileResponse(found, headers={"Cache-Control": cache})
        if "." in path.rsplit("/", 1)[-1]:
            raise NotFound("no such file")  # a missing asset is a 404, not the app
        return FileResponse(index, headers={"Cache-Control": REVALIDATE})

    for route in ("/", "/{path:path}"):
        app.add_api_route(route, ui, methods=["GET", "HEAD"], include_in_schema=False)
    log.info("serving the web UI", extra={"action": "ui", "directory": str(root)})
    return True
