"""Alembic head matches the job store models: autogenerate finds nothing to do."""

import asyncio
import uuid
from typing import Any

import asyncpg
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


async def test_0013_moves_every_owners_rows_into_their_default_project_and_migrates_down(
    postgres_server: Any,
) -> None:
    """A store with jobs, batches, schedules and open dead letters of three users: every row
    kept and in its owner's personal default project (the id the gateway gives it); a row a
    writer of the previous release inserts without a project gets the same; down again, every
    row still there."""
    from jobs_common.migrations import downgrade
    from jobs_common.tenancy import personal_project_id
    from jobs_scheduler.migrate import MIGRATIONS, upgrade

    name = f"t_projects_{uuid.uuid4().hex[:10]}"
    url = await postgres_server.create(name)
    try:
        await asyncio.to_thread(upgrade, url, "0012")
        owners = ["alice@example.com", "Bob@Example.com", "carol+ops@example.com"]
        connection = await asyncpg.connect(url)
        try:
            for index, owner in enumerate(owners):
                batch = uuid.uuid4()
                await connection.execute(
                    "INSERT INTO batches (id, submitted_by, total) VALUES ($1, $2, 2)", batch, owner
                )
                for n in range(2):
                    job = uuid.uuid4()
                    await connection.execute(
                        "INSERT INTO jobs (id, type, priority, payload, submitted_by, status, "
                        "max_attempts, attempt_limit, timeout_seconds, batch_id) "
                        "VALUES ($1, 'email', 2, '{}', $2, $3, 3, 3, 60, $4)",
                        job,
                        owner,
                        "dead" if n else "succeeded",
                        batch,
                    )
                    if n:
                        await connection.execute(
                            "INSERT INTO dead_letters (id, job_id, attempt, reason, "
                            "payload_snapshot) VALUES ($1, $2, 3, 'max_attempts', '{}')",
                            uuid.uuid4(),
                            job,
                        )
                await connection.execute(
                    "INSERT INTO schedules (id, name, cron, timezone, job_template, owner) "
                    "VALUES ($1, $2, '* * * * *', 'UTC', '{\"type\": \"email\"}', $3)",
                    uuid.uuid4(),
                    f"nightly-{index}",
                    owner,
                )
        finally:
            await connection.close()

        await asyncio.to_thread(upgrade, url)

        connection = await asyncpg.connect(url)
        try:
            for table, owner in (
                ("jobs", "submitted_by"),
                ("batches", "submitted_by"),
                ("schedules", "owner"),
            ):
                rows = await connection.fetch(f"SELECT {owner} AS owner, project_id FROM {table}")
                assert len(rows) == {"jobs": 6, "batches": 3, "schedules": 3}[table]
                assert all(r["project_id"] == personal_project_id(r["owner"]) for r in rows)
            open_letters = await connection.fetch(
                "SELECT j.project_id FROM dead_letters d JOIN jobs j ON j.id = d.job_id"
            )
            assert sorted(r["project_id"] for r in open_letters) == sorted(
                personal_project_id(o) for o in owners
            )
            older_writer = uuid.uuid4()  # the previous release's INSERT names no project
            await connection.execute(
                "INSERT INTO jobs (id, type, priority, payload, submitted_by, status, "
                "max_attempts, attempt_limit, timeout_seconds) VALUES ($1, 'email', 2, '{}', "
                "'dave@example.com', 'pending', 3, 3, 60)",
                older_writer,
            )
            assert await connection.fetchval(
                "SELECT project_id FROM jobs WHERE id = $1", older_writer
            ) == personal_project_id("dave@example.com")
            named = uuid.uuid4()
            await connection.execute(
                "INSERT INTO jobs (id, type, priority, payload, submitted_by, project_id, status, "
                "max_attempts, attempt_limit, timeout_seconds) VALUES ($1, 'email', 2, '{}', "
                "'dave@example.com', $2, 'pending', 3, 3, 60)",
                uuid.uuid4(),
                named,
            )
            assert (
                await connection.fetchval("SELECT count(*) FROM jobs WHERE project_id = $1", named)
                == 1
            )
        finally:
            await connection.close()

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0012")
        connection = await asyncpg.connect(url)
        try:
            assert await connection.fetchval("SELECT count(*) FROM jobs") == 8
            assert await connection.fetchval("SELECT count(*) FROM dead_letters") == 3
            assert not await connection.fetchval(
                "SELECT count(*) FROM information_schema.columns WHERE column_name = 'project_id'"
            )
        finally:
            await connection.close()
    finally:
        await postgres_server.drop(name)
