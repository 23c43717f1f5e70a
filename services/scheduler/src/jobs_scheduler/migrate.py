"""Apply the job store migrations: ``python -m jobs_scheduler.migrate [DATABASE_URL]``.

Alembic runs synchronously here (in a worker thread when called from async code), against
the async URL through SQLAlchemy's asyncpg dialect.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config

from jobs_common.db import async_url

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "alembic_version_scheduler"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", async_url(database_url).replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


async def upgrade_async(database_url: str) -> None:
    await asyncio.to_thread(upgrade, database_url)


def main() -> None:
    url = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get(
            "SCHEDULER_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/jobs"
        )
    )
    upgrade(url)


if __name__ == "__main__":
    main()
