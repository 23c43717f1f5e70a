"""Entry point: ``python -m jobs_gateway``."""

from __future__ import annotations

from jobs_common.serve import run_service
from jobs_gateway.app import create_app
from jobs_gateway.settings import Settings


def main() -> None:
    run_service("gateway", Settings, create_app)


if __name__ == "__main__":
    main()
