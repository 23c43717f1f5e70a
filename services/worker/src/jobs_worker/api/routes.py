"""Ops routes: /ready checks the connection and a live consumer on every ready queue; the
same checks are the worker's liveness (/health), except while it drains to stop."""

from __future__ import annotations

from fastapi import FastAPI

from jobs_common.ops_routes import add_ops_routes
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.settings import Settings


def install_routes(app: FastAPI, settings: Settings) -> None:
    async def ready() -> dict[str, bool]:
        runtime: WorkerRuntime | None = getattr(app.state, "runtime", None)
        if runtime is None:
            return {"amqp": False}
        return await runtime.ready_checks()

    async def live() -> dict[str, bool]:
        runtime: WorkerRuntime | None = getattr(app.state, "runtime", None)
        if runtime is None or runtime.stopping:
            return {}
        return await runtime.ready_checks()

    add_ops_routes(app, ready, live=live, settings=settings)
