"""``python -m jobs_submission``: run the service with uvicorn on uvloop."""

from __future__ import annotations

import uvicorn

from jobs_common.logging import configure_logging
from jobs_submission.app import create_app
from jobs_submission.settings import Settings


def main() -> None:
    settings = Settings()
    configure_logging(service="submission", level=settings.log_level, json=settings.log_json)
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
