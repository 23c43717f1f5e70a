"""Entry point: ``python -m jobs_worker`` (or ``jobs-worker``)."""

from __future__ import annotations

import uvloop

from jobs_common.logging import configure_logging
from jobs_common.serve import serve
from jobs_common.settings import settings_from_environment
from jobs_worker.app import create_app
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.settings import Settings


async def run_burst(settings: Settings) -> None:
    """Process what is queued, then exit (no HTTP server)."""
    runtime = WorkerRuntime(settings)
    await runtime.start()
    try:
        await runtime.run_until_idle()
    finally:
        await runtime.stop()


def main() -> None:
    settings = settings_from_environment(Settings)
    configure_logging(service="worker", level=settings.log_level, json=settings.log_json)
    if settings.burst:
        uvloop.run(run_burst(settings))
        return
    serve(create_app(settings), settings)


if __name__ == "__main__":
    main()
