"""The worker app: the lifespan runs the consumers; HTTP serves health, readiness, metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from jobs_common.error_handlers import install_error_handlers
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.request_context import LogContextMiddleware
from jobs_worker.api.routes import install_routes
from jobs_worker.app.handler_loading import Handlers
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.settings import Settings


def create_app(settings: Settings, handlers: Handlers | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = WorkerRuntime(settings, handlers=handlers)
        await runtime.start()
        app.state.runtime = runtime
        try:
            yield
        finally:
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
