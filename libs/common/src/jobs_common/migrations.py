"""Alembic plumbing shared by the services that own PostgreSQL schemas.

Each service keeps its own migration scripts and version table; this module runs them against
the async URL (SQLAlchemy's asyncpg dialect) and serializes replicas that start together with
an advisory lock held for the migration transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from jobs_common.db import async_url

IncludeName = Callable[[str | None, Any, Any], bool]


def alembic_config(script_location: Path, database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(script_location))
    config.set_main_option("sqlalchemy.url", async_url(database_url).replace("%", "%%"))
    return config


def upgrade(script_location: Path, database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(script_location, database_url), revision)


def downgrade(script_location: Path, database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(script_location, database_url), revision)


async def upgrade_async(script_location: Path, database_url: str) -> None:
    await asyncio.to_thread(upgrade, script_location, database_url)


def run_env(
    *,
    metadata: MetaData,
    version_table: str,
    lock_key: int,
    include_name: IncludeName,
    version_table_schema: str | None = None,
    prepare: Callable[[Connection], None] | None = None,
) -> None:
    """The body of a migrations/env.py: online, async engine, under an advisory lock."""
    if context.is_offline_mode():
        raise SystemExit("offline migrations are not supported")

    def run(connection: Connection) -> None:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            version_table=version_table,
            version_table_schema=version_table_schema,
            include_schemas=version_table_schema is not None,
            include_name=include_name,
            compare_type=True,
        )
        with context.begin_transaction():
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key})
            if prepare is not None:
                prepare(connection)
            context.run_migrations()

    async def run_async() -> None:
        engine = create_async_engine(context.config.get_main_option("sqlalchemy.url") or "")
        async with engine.connect() as connection:
            await connection.run_sync(run)
            await connection.commit()
        await engine.dispose()

    asyncio.run(run_async())
