"""/api/{path}: verify the bearer token, route, forward, pass the answer through."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response

from jobs_common.errors import ErrorEnvelope
from jobs_common.fast_routes import FastRoute
from jobs_gateway.adapters.upstream import Upstreams
from jobs_gateway.api.deps import client_ip, scoped_identity
from jobs_gateway.api.deps import request_id as request_id_of
from jobs_gateway.domain.headers import upstream_request_headers
from jobs_gateway.domain.project_scope import with_project_id
from jobs_gateway.domain.routing import resolve

log = logging.getLogger(__name__)

router = APIRouter(tags=["api"])

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PREFIX = b"/api/"


def _raw_subpath(request: Request) -> str:
    """The path below /api/ exactly as the client encoded it."""
    raw: bytes = request.scope.get("raw_path") or request.url.path.encode()
    raw = raw.split(b"?", 1)[0]
    return raw[len(PREFIX) :].decode("latin-1") if raw.startswith(PREFIX) else ""


async def proxy(request: Request) -> Response:
    # Its parts are read here, not declared as dependencies: FastAPI's resolution of four
    # of them took a sixth of the gateway's CPU per proxied request (py-spy, single requests).
    identity = await scoped_identity(request)  # verified, counted against its limit, scoped
    upstreams: Upstreams = request.app.state.upstreams
    ip = await client_ip(request)
    request_id = await request_id_of(request)
    target = resolve(request.method, _raw_subpath(request))
    request.state.route_template = target.template
    headers = upstream_request_headers(
        request.headers.items(),
        identity=identity,
        internal_token=request.app.state.internal_token,
        request_id=request_id,
        client_ip=ip,
        trace_id=getattr(request.state, "trace_id", None),
    )
    answer = await upstreams.forward(
        upstream=target.upstream,
        method=request.method,
        path=target.path,
        query=with_project_id(
            request.scope.get("query_string", b"").decode("latin-1"), identity.project_id
        ),
        headers=headers,
        body=await request.body(),
        request_id=request_id,
    )
    log.debug(
        "proxied",
        extra={
            "action": "proxy",
            "upstream": target.upstream,
            "route": target.template,
            "status": answer.status_code,
            "request_id": request_id,
        },
    )
    return Response(content=answer.content, status_code=answer.status_code, headers=answer.headers)


for _method in METHODS:
    router.add_api_route(
        "/api/{path:path}",
        proxy,
        methods=[_method],
        name=f"proxy_{_method.lower()}",
        summary=f"{_method} /api/...: proxied to submission or dashboard (a token or an API key)",
        responses={
            400: {"model": ErrorEnvelope, "description": "the project named is ambiguous"},
            401: {"model": ErrorEnvelope, "description": "missing or invalid token"},
            403: {"model": ErrorEnvelope, "description": "the caller's role may not do this"},
            404: {"model": ErrorEnvelope, "description": "the project named is not yours to see"},
            429: {"model": ErrorEnvelope, "description": "too many requests from this user"},
            503: {"model": ErrorEnvelope, "description": "backend unavailable"},
        },
    )


def fast_routes() -> list[FastRoute]:
    """The hot proxied paths, answered by :func:`proxy` without FastAPI's routing through
    every route declared before it (``jobs_common.fast_routes``)."""
    return [
        FastRoute("POST", path, route_name="proxy_post", handler=proxy)
        for path in ("/api/jobs", "/api/batches")
    ]
