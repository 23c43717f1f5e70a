"""Entry point: ``python -m jobs_submission``."""

from __future__ import annotations

from jobs_common.serve import run_service
from jobs_submission.service import create_app
from jobs_submission.settings import Settings


def main() -> None:
    run_service("submission", Settings, create_app)


if __name__ == "__main__":
    main()
