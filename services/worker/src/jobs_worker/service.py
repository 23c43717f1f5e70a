"""The worker app: the lifespan runs the consumers; HTTP serves health, readiness, metrics."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from jobs_common import liveness
from jobs_common.error_handlers import install_error_handlers
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.request_context import LogContextMiddleware
from jobs_worker.api.routes import install_routes
from jobs_worker.app.handler_loading import Handlers
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.settings import Settings


async def exit_when_asked(runtime: WorkerRuntime) -> None:
    """An admin's ``stop``: once its jobs have finished, the worker leaves the way SIGTERM
    makes it leave (uvicorn stops serving, the lifespan stops the runtime), with status 0."""
    await runtime.exit_requested.wait()
    liveness.stop_gracefully()


def create_app(settings: Settings, handlers: Handlers | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = WorkerRuntime(settings, handlers=handlers)
        await runtime.start()
        app.state.runtime = runtime
        exit_on_stop = asyncio.create_task(exit_when_asked(runtime), name="exit-on-stop")
        try:
            yield
        finally:
            exit_on_stop.cancel()
            # SIGTERM: uvicorn stops serving and runs this; stop consuming, drain, close.
            await runtime.stop()
            app.state.runtime = None

    app = FastAPI(title="jobs worker", version="0.1.0", lifespan=lifespan)
    app.state.runtime = None
    install_error_handlers(app)
    app.add_middleware(LogContextMiddleware)
    app.add_middleware(HttpMetricsMiddleware)
    install_routes(app, settings)
    return app
