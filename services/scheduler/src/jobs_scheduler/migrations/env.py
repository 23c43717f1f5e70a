"""Alembic environment for the job store (async engine, own version table)."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from jobs_common.jobstore import metadata

VERSION_TABLE = "alembic_version_scheduler"
# Several scheduler replicas may start together: one migrates, the others wait on this lock.
MIGRATION_LOCK_KEY = 7_201_001


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        compare_type=True,
        include_name=lambda name, type_, _parent: (
            not (type_ == "table" and name is not None and name.startswith("alembic_version"))
        ),
    )
    with context.begin_transaction():
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(context.config.get_main_option("sqlalchemy.url") or "")
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported")
asyncio.run(_run_async())
