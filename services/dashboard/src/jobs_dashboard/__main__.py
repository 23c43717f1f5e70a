"""``python -m jobs_dashboard``: build settings, configure logging, serve with uvicorn."""

from __future__ import annotations

import uvicorn

from jobs_common.logging import configure_logging
from jobs_dashboard.app import create_app
from jobs_dashboard.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging(service="dashboard", level=settings.log_level, json=settings.log_json)
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
