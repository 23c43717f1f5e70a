"""Apply the gateway migrations (and, in development, seed the demo users):
``python -m jobs_gateway.migrate [DATABASE_URL]``.

Only schema ``gateway`` is touched; the version
table is ``gateway.alembic_version_gateway``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from jobs_common import migrations
from jobs_common.logging import configure_logging
from jobs_common.settings import settings_from_environment

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def upgrade(database_url: str, revision: str = "head") -> None:
    migrations.upgrade(MIGRATIONS, database_url, revision)


async def upgrade_async(database_url: str) -> None:
    await migrations.upgrade_async(MIGRATIONS, database_url)


def main() -> None:
    from jobs_gateway.adapters.seed import seed_database
    from jobs_gateway.settings import MigrationSettings

    settings = settings_from_environment(MigrationSettings)
    configure_logging(service="gateway", level=settings.log_level, json=settings.log_json)
    url = sys.argv[1] if len(sys.argv) > 1 else settings.database_url
    upgrade(url)
    if settings.seeds_demo_users:
        asyncio.run(seed_database(url, team=True))


if __name__ == "__main__":
    main()
