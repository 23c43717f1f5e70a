"""``python -m jobs_gateway``: build the settings, configure logging, serve."""

from __future__ import annotations

import uvicorn

from jobs_common.logging import configure_logging
from jobs_gateway.app import create_app
from jobs_gateway.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging(service="gateway", level=settings.log_level, json=settings.log_json)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        loop="uvloop",
        log_config=None,
        proxy_headers=False,
    )


if __name__ == "__main__":
    main()
