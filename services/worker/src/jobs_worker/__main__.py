"""Entry point: ``python -m jobs_worker`` (or ``jobs-worker``)."""

from __future__ import annotations

import asyncio
import sys

import uvloop

from jobs_common.logging import configure_logging
from jobs_common.serve import serve
from jobs_common.settings import settings_from_environment
from jobs_worker.app.handler_loading import HandlerLoadError, Handlers, handlers_for, served_queues
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.service import create_app
from jobs_worker.settings import Settings

# A worker that cannot load its handlers exits with this code (before it connects anywhere).
EXIT_BAD_HANDLERS = 3


async def run_burst(settings: Settings, handlers: Handlers) -> None:
    """Process what is queued, then exit (no HTTP server); an admin's ``stop`` ends it too."""
    runtime = WorkerRuntime(settings, handlers=handlers)
    await runtime.start()
    try:
        idle = asyncio.create_task(runtime.run_until_idle())
        asked = asyncio.create_task(runtime.exit_requested.wait())
        await asyncio.wait({idle, asked}, return_when=asyncio.FIRST_COMPLETED)
        for task in (idle, asked):
            task.cancel()
        await asyncio.gather(idle, asked, return_exceptions=True)
    finally:
        await runtime.stop()


def main() -> None:
    settings = settings_from_environment(Settings)
    configure_logging(service="worker", level=settings.log_level, json=settings.log_json)
    try:
        handlers = handlers_for(settings)
        served_queues(settings, handlers.registry)  # a WORKER_QUEUES mistake stops it here
    except HandlerLoadError as exc:
        print(f"jobs-worker: cannot start: {exc}", file=sys.stderr)
        sys.exit(EXIT_BAD_HANDLERS)
    if settings.burst:
        uvloop.run(run_burst(settings, handlers))
        return
    serve(create_app(settings, handlers), settings)


if __name__ == "__main__":
    main()
