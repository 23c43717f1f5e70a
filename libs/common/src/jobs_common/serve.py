"""Serving a service: settings from the environment, logging configured once, uvicorn on uvloop
with the httptools parser (the pure-Python h11 parser costs about twice the CPU per request).

Idle keep-alive connections stay open ``KEEP_ALIVE_SECONDS``, longer than the gateway's
client keeps them (``jobs_gateway.adapters.upstream``): with equal timeouts a request could
go out on a connection the server was closing at that moment, and fail with a read error.

Once the app has started, everything alive is moved out of the garbage collector's sight
(``gc.freeze()``): modules, schemas, metadata and connections live as long as the process, yet
each full collection walked them all again and stopped the service for 70-140 ms, a few times
a minute under load (measured with ``gc.callbacks``); after the freeze none took over 10 ms.

A service may run small side apps in the same process and event loop, each on a port of its
own (:class:`Sidecar`: the gateway's metrics, kept off its public port). They start with the
service, stop when it stops, and take no part in signal handling: the service's server
handles SIGTERM/SIGINT and the process ends with it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp
from uvicorn.config import STARTUP_FAILURE

from jobs_common import liveness
from jobs_common.logging import configure_logging
from jobs_common.settings import ServiceSettings, settings_from_environment

S = TypeVar("S", bound=ServiceSettings)

KEEP_ALIVE_SECONDS = 75


def freeze_heap_after_startup(app: FastAPI) -> FastAPI:
    """Wrap ``app``'s lifespan: once its startup has run, collect once and freeze the heap."""
    startup = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(target: Any) -> AsyncIterator[Any]:
        async with startup(target) as state:
            gc.collect()
            gc.freeze()
            yield state

    app.router.lifespan_context = lifespan
    return app


@dataclass(frozen=True)
class Sidecar:
    """A small ASGI app (no lifespan) served by the service's process on ``port`` of the
    service's host."""

    app: ASGIApp
    port: int


class _SidecarServer(uvicorn.Server):
    """Leaves the signals to the service's own server."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _options(host: str, port: int) -> dict[str, Any]:
    return {
        "host": host,
        "port": port,
        "loop": "uvloop",
        "http": "httptools",
        "log_config": None,
        "access_log": False,
        "proxy_headers": False,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
    }


async def serve_together(main: uvicorn.Server, sidecars: Sequence[uvicorn.Server]) -> None:
    """Run ``main`` and the sidecars in this loop; stop the sidecars once ``main`` ends. A
    sidecar that cannot bind its port ends the process at start (uvicorn exits)."""
    tasks = [asyncio.create_task(sidecar.serve(), name="sidecar") for sidecar in sidecars]
    try:
        await main.serve()
    finally:
        for sidecar in sidecars:
            sidecar.should_exit = True
        await asyncio.gather(*tasks, return_exceptions=True)


def servers(
    app: ASGIApp, settings: ServiceSettings, sidecars: Sequence[Sidecar]
) -> tuple[uvicorn.Server, list[uvicorn.Server]]:
    """The service's server and one per sidecar (on the service's host)."""
    main = uvicorn.Server(uvicorn.Config(app, **_options(settings.host, settings.port)))
    extra: list[uvicorn.Server] = [
        _SidecarServer(
            uvicorn.Config(sidecar.app, **_options(settings.host, sidecar.port), lifespan="off")
        )
        for sidecar in sidecars
    ]
    return main, extra


def serve(app: FastAPI, settings: ServiceSettings, sidecars: Sequence[Sidecar] = ()) -> None:
    freeze_heap_after_startup(app)
    main, extra = servers(app, settings, sidecars)
    # A liveness watchdog that gives up stops this server as SIGTERM would (a signal would
    # be raised again by uvicorn once stopped, and the process end by it, not exit 70).
    liveness.set_stop_hook(lambda: setattr(main, "should_exit", True))
    with asyncio.Runner(loop_factory=main.config.get_loop_factory()) as runner:
        runner.run(serve_together(main, extra))
    if not main.started:
        sys.exit(STARTUP_FAILURE)


def run_service(
    service: str,
    settings_type: type[S],
    create_app: Callable[[S], FastAPI],
    sidecars: Callable[[S], Sequence[Sidecar]] = lambda _: (),
) -> None:
    """The body of every ``python -m jobs_<service>``."""
    settings = settings_from_environment(settings_type)
    configure_logging(service=service, level=settings.log_level, json=settings.log_json)
    serve(create_app(settings), settings, sidecars(settings))
    if liveness.gave_up():  # stopped itself: not a clean stop, so a supervisor restarts it
        sys.exit(liveness.EXIT_UNHEALTHY)
