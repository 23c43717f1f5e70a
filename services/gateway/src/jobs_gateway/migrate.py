"""Apply the gateway migrations and seed the demo users:
``python -m jobs_gateway.migrate [DATABASE_URL]``.

Alembic runs synchronously here (in a worker thread when called from async code), against the
async URL through SQLAlchemy's asyncpg dialect. Only schema ``gateway`` is touched; the version
table is ``gateway.alembic_version_gateway``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config

from jobs_common.db import async_url
from jobs_common.logging import configure_logging

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "alembic_version_gateway"


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
    from jobs_gateway.adapters.seed import seed_database
    from jobs_gateway.settings import Settings

    settings = Settings()
    configure_logging(service="gateway", level=settings.log_level, json=settings.log_json)
    url = sys.argv[1] if len(sys.argv) > 1 else settings.database_url
    upgrade(url)
    if settings.seed_demo_users:
        asyncio.run(seed_database(url))


if __name__ == "__main__":
    main()
