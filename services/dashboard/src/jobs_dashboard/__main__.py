"""Entry point: ``python -m jobs_dashboard``."""

from __future__ import annotations

from jobs_common.serve import run_service
from jobs_dashboard.service import create_app
from jobs_dashboard.settings import Settings


def main() -> None:
    run_service("dashboard", Settings, create_app)


if __name__ == "__main__":
    main()
