"""The public API contract served at ``/openapi.json`` and its Swagger UI at ``/docs``.

The document is assembled from the backends' own schemas at the gateway's paths by
``scripts/public_openapi.py`` (``make openapi``) and committed beside this package; a test
fails when it no longer matches the code. The gateway serves it as is: it does not import
the backends.

Swagger UI's JavaScript, CSS and favicon come from no CDN: the gateway serves them itself,
from the package data of ``fastapi-offline`` (pinned in constraints.txt), under
``/docs/assets/<that package's version>/``, so ``/docs`` works on a machine without internet.
The version in the path changes with the files, so they are cached for a year.
"""

from __future__ import annotations

import json
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import FileResponse, HTMLResponse

from jobs_common.errors import NotFound

DOCS_URL = "/docs"
# The distribution that ships Swagger UI's built files, and its import name.
SWAGGER_UI_DISTRIBUTION = "fastapi-offline"
SWAGGER_UI_PACKAGE = "fastapi_offline"
SWAGGER_JS = "swagger-ui-bundle.js"
SWAGGER_CSS = "swagger-ui.css"
SWAGGER_FAVICON = "favicon.png"
DOCS_ASSETS = {
    SWAGGER_JS: "text/javascript; charset=utf-8",
    SWAGGER_CSS: "text/css; charset=utf-8",
    SWAGGER_FAVICON: "image/png",
}
IMMUTABLE = "public, max-age=31536000, immutable"


def public_document() -> dict[str, Any]:
    text = resources.files("jobs_gateway").joinpath("openapi/public.json").read_text()
    document: dict[str, Any] = json.loads(text)
    return document


def install_public_openapi(app: FastAPI) -> None:
    """Serve the assembled public document instead of the gateway's own routes (whose
    ``/api/{path}`` catch-all says nothing about the API behind it)."""
    document = public_document()

    def openapi() -> dict[str, Any]:
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def docs_asset_files() -> dict[str, Path]:
    """Swagger UI's files as installed with ``fastapi-offline`` (a plain directory of
    package data); a missing one fails the start rather than leaving ``/docs`` blank."""
    root = Path(str(resources.files(SWAGGER_UI_PACKAGE).joinpath("static")))
    files = {name: root / name for name in DOCS_ASSETS}
    missing = sorted(name for name, path in files.items() if not path.is_file())
    if missing:
        raise RuntimeError(f"{SWAGGER_UI_DISTRIBUTION} ships no {missing} in {root}")
    return files


def docs_assets_prefix() -> str:
    return f"{DOCS_URL}/assets/{metadata.version(SWAGGER_UI_DISTRIBUTION)}"


def install_docs(app: FastAPI) -> None:
    """Swagger UI at ``/docs`` (the app is built with ``docs_url=None``) with its assets
    served from ``/docs/assets/...``, and its OAuth2 redirect page as FastAPI has it."""
    if app.docs_url is not None:
        raise ValueError("build the app with docs_url=None: install_docs serves /docs")
    files = docs_asset_files()
    prefix = docs_assets_prefix()
    openapi_url = app.openapi_url or "/openapi.json"
    oauth2_redirect_url = app.swagger_ui_oauth2_redirect_url

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{prefix}/{SWAGGER_JS}",
            swagger_css_url=f"{root}{prefix}/{SWAGGER_CSS}",
            swagger_favicon_url=f"{root}{prefix}/{SWAGGER_FAVICON}",
            oauth2_redirect_url=root + oauth2_redirect_url if oauth2_redirect_url else None,
            init_oauth=app.swagger_ui_init_oauth,
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    async def asset(name: str) -> FileResponse:
        path = files.get(name)
        if path is None:
            raise NotFound("no such file")
        return FileResponse(
            path, media_type=DOCS_ASSETS[name], headers={"Cache-Control": IMMUTABLE}
        )

    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    methods = ["GET", "HEAD"]
    app.add_api_route(DOCS_URL, swagger_ui, methods=methods, include_in_schema=False)
    app.add_api_route(prefix + "/{name}", asset, methods=methods, include_in_schema=False)
    if oauth2_redirect_url:
        app.add_api_route(
            oauth2_redirect_url, swagger_ui_redirect, methods=methods, include_in_schema=False
        )
