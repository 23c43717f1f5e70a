"""The error envelope on every HTTP answer: platform errors, a body that is not JSON (400),
request validation (422 with field paths), Starlette's 404/405/413 (a 405 with the path's
``Allow``) and the unexpected (500, no internals).

Installing them installs the input rule too (``jobs_common.storable_input``): every app that
answers in the envelope refuses a NUL or a lone surrogate in its URL, headers and JSON bodies
(422 / 400), so no route can accept what a store would refuse later."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from jobs_common.errors import ErrorDetail, ErrorEnvelope, PlatformError
from jobs_common.json_response import JsonResponse
from jobs_common.storable_input import install_storable_input
from jobs_common.storable_text import UNPARSABLE_BODY

__all__ = [
    "HTTP_METHODS",
    "UNPARSABLE_BODY",
    "allowed_methods",
    "install_error_handlers",
    "validation_details",
]

log = logging.getLogger(__name__)


def _field_path(loc: tuple[Any, ...]) -> str:
    """``("body", "payload", "body")`` -> ``payload.body``: only the location prefix is dropped."""
    if loc and loc[0] in ("body", "query", "path", "header"):
        loc = loc[1:]
    return ".".join(str(p) for p in loc) or "body"


def validation_details(errors: Any) -> list[ErrorDetail]:
    return [ErrorDetail(field=_field_path(tuple(e["loc"])), message=e["msg"]) for e in errors]


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> set[str]:
    """The methods some route answers at the request's path: a 405's ``Allow`` (Starlette
    names only the first partly matching route's; included routers are asked too)."""
    probe: Scope = {
        "type": "http",
        "path": scope["path"],
        "root_path": scope.get("root_path", ""),
        "headers": [],
        "query_string": b"",
    }
    routes = list(routes)
    return {
        method
        for method in HTTP_METHODS
        if any(route.matches({**probe, "method": method})[0] is Match.FULL for route in routes)
    }


def install_error_handlers(app: FastAPI) -> None:
    """Call it before the app's routes are included (the input rule is an app dependency)."""
    install_storable_input(app)

    @app.exception_handler(PlatformError)
    async def _platform(_: Request, exc: PlatformError) -> JsonResponse:
        return JsonResponse(exc.envelope(), status_code=exc.status_code, headers=exc.headers())

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JsonResponse:
        if any(error.get("type") == "json_invalid" for error in exc.errors()):
            # One rule on every route: a body that cannot be parsed is a 400, not a 422 that
            # names a character position as its "field".
            unparsable = ErrorEnvelope(error="bad_request", message=UNPARSABLE_BODY)
            return JsonResponse(unparsable.model_dump(), status_code=400)
        body = ErrorEnvelope(
            error="validation_error",
            message="request validation failed",
            details=validation_details(exc.errors()),
        )
        return JsonResponse(body.model_dump(), status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JsonResponse:
        log.error("unhandled error", extra={"action": "http_error"}, exc_info=exc)
        body = ErrorEnvelope(error="internal_error", message="internal error")
        return JsonResponse(body.model_dump(), status_code=500)

    codes = {
        404: "not_found",
        405: "method_not_allowed",
        413: "payload_too_large",
        401: "unauthorized",
        403: "forbidden",
    }

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JsonResponse:
        code = codes.get(exc.status_code, "bad_request")
        body = ErrorEnvelope(error=code, message=str(exc.detail))
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            if allow := allowed_methods(request.app.router.routes, request.scope):
                headers["Allow"] = ", ".join(sorted(allow))
        return JsonResponse(body.model_dump(), status_code=exc.status_code, headers=headers)
