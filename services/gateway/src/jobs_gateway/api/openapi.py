"""The public API contract served at ``/openapi.json`` and ``/docs``.

The document is assembled from the backends' own schemas at the gateway's paths by
``scripts/public_openapi.py`` (``make openapi``) and committed beside this package; a test
fails when it no longer matches the code. The gateway serves it as is: it does not import
the backends.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from fastapi import FastAPI


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
