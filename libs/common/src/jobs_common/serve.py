"""Serving a service: settings from the environment, logging configured once, uvicorn on uvloop
with the httptools parser (the pure-Python h11 parser costs about twice the CPU per request).

Idle keep-alive connections stay open ``KEEP_ALIVE_SECONDS``, longer than the gateway's
client keeps them (``jobs_gateway.adapters.upstream``): with equal timeouts a request could
go out on a connection the server was closing at that moment, and fail with a read error."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import uvicorn
from fastapi import FastAPI

from jobs_common.logging import configure_logging
from jobs_common.settings import ServiceSettings

S = TypeVar("S", bound=ServiceSettings)

KEEP_ALIVE_SECONDS = 75


def serve(app: FastAPI, settings: ServiceSettings) -> None:
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        loop="uvloop",
        http="httptools",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )


def run_service(service: str, settings_type: type[S], create_app: Callable[[S], FastAPI]) -> None:
    """The body of every ``python -m jobs_<service>``."""
    settings = settings_type()
    configure_logging(service=service, level=settings.log_level, json=settings.log_json)
    serve(create_app(settings), settings)
