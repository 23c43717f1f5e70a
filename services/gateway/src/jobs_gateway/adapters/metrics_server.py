"""The gateway's Prometheus metrics, served on a port of their own.

The gateway's public port (3000) is the internet's entry: ``/metrics`` there answers 404.
The metrics (request counts by route, upstream calls, logins, live connections) are served on
``GATEWAY_METRICS_PORT`` (9300; 0 serves none) of ``GATEWAY_HOST``, by a second small server in
the same process and event loop (:class:`jobs_common.serve.Sidecar`), for Prometheus on the
private network only: compose publishes no host port for it.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from jobs_common.serve import Sidecar
from jobs_gateway.settings import Settings

METRICS_PATH = "/metrics"


async def metrics(_: Request) -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def metrics_app() -> Starlette:
    """``GET /metrics`` (the process's registry); any other path 404."""
    return Starlette(routes=[Route(METRICS_PATH, metrics, methods=["GET"])])


def metrics_sidecars(settings: Settings) -> list[Sidecar]:
    if settings.metrics_port == 0:
        return []
    return [Sidecar(app=metrics_app(), port=settings.metrics_port)]
