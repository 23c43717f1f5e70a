"""Apply the job store migrations: ``python -m jobs_scheduler.migrate [DATABASE_URL]``."""

from __future__ import annotations

import sys
from pathlib import Path

from jobs_common import migrations

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def upgrade(database_url: str, revision: str = "head") -> None:
    migrations.upgrade(MIGRATIONS, database_url, revision)


async def upgrade_async(database_url: str) -> None:
    await migrations.upgrade_async(MIGRATIONS, database_url)


def main() -> None:
    from jobs_scheduler.settings import Settings

    upgrade(sys.argv[1] if len(sys.argv) > 1 else Settings().database_url)


if __name__ == "__main__":
    main()
