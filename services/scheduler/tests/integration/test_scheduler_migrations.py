"""Alembic head matches the job store models: autogenerate finds nothing to do."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from jobs_common.db import async_url
from jobs_common.jobstore import metadata

pytestmark = pytest.mark.integration


async def test_migrations_match_models(jobs_database_url: str) -> None:
    engine = create_async_engine(async_url(jobs_database_url))
    async with engine.connect() as connection:
        diff = await connection.run_sync(
            lambda sync: compare_metadata(
                MigrationContext.configure(
                    sync,
                    opts={
                        "compare_type": True,
                        "include_name": lambda name, type_, _p: (
                            not (type_ == "table" and (name or "").startswith("alembic_version"))
                        ),
                    },
                ),
                metadata,
            )
        )
    await engine.dispose()
    assert diff == []
