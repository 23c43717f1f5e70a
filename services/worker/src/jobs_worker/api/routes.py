"""Ops routes: /ready checks the connection and a live consumer on every ready queue."""

from __future__ import annotations

from fastapi import FastAPI

from jobs_common.http import add_ops_routes
from jobs_worker.runtime import WorkerRuntime


def install_routes(app: FastAPI) -> None:
    async def ready() -> dict[str, bool]:
        runtime: WorkerRuntime | None = getattr(app.state, "runtime", None)
        if runtime is None:
            return {"amqp": False}
        return await runtime.ready_checks()

    add_ops_routes(app, ready)
