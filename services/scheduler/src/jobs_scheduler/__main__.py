"""Entry point: ``python -m jobs_scheduler``."""

from __future__ import annotations

import uvicorn

from jobs_common.logging import configure_logging
from jobs_scheduler.app import create_app
from jobs_scheduler.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging(service="scheduler", level=settings.log_level, json=settings.log_json)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        loop="uvloop",
        log_config=None,
        access_log=False,
    )


if __name__ == "__main__":
    main()
