"""Entry point: ``python -m jobs_scheduler``."""

from __future__ import annotations

from jobs_common.serve import run_service
from jobs_scheduler.service import create_app
from jobs_scheduler.settings import Settings


def main() -> None:
    run_service("scheduler", Settings, create_app)


if __name__ == "__main__":
    main()
