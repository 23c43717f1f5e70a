"""Alembic head matches the job store models: autogenerate finds nothing to do. Migrations
that move existing rows (0013, 0014) keep them right, and migrate down again."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from jobs_common.db import async_url
from jobs_common.jobstore import ROLLUP_FAMILIES, metadata

from .rollup_figures import mismatches, write_history

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


ROLLUP_RELATIONS = "'^job_(counts|runtimes|finishes)_'"
# What makes the rollups' schema: relations (tables, indexes, sequences) and their options,
# columns in order, constraints, indexes, the rollup functions' bodies (white space aside: the
# generated SQL wraps other than 0009's) and the triggers on jobs.
SHAPE = {
    "relations": "SELECT relname, relkind::text, reloptions FROM pg_class "
    f"WHERE relname ~ {ROLLUP_RELATIONS}",
    "columns": "SELECT table_name::text, ordinal_position, column_name::text, data_type::text, "
    f"is_nullable::text FROM information_schema.columns WHERE table_name ~ {ROLLUP_RELATIONS}",
    "constraints": "SELECT conrelid::regclass::text, conname::text, pg_get_constraintdef(oid) "
    f"FROM pg_constraint WHERE conrelid::regclass::text ~ {ROLLUP_RELATIONS}",
    "indexes": "SELECT tablename::text, indexname::text, indexdef FROM pg_indexes "
    f"WHERE tablename ~ {ROLLUP_RELATIONS}",
    "functions": "SELECT proname::text, pg_get_function_arguments(oid), "
    "regexp_replace(prosrc, '\\s', '', 'g') FROM pg_proc WHERE proname ~ '^job_'",
    "triggers": "SELECT pg_get_triggerdef(oid) FROM pg_trigger "
    "WHERE tgrelid = 'jobs'::regclass AND NOT tgisinternal",
}


async def rollup_shape(url: str) -> dict[str, list[tuple[Any, ...]]]:
    connection = await asyncpg.connect(url)
    try:
        return {
            part: sorted(tuple(r) for r in await connection.fetch(sql))
            for part, sql in SHAPE.items()
        }
    finally:
        await connection.close()


@asynccontextmanager
async def store(url: str) -> AsyncIterator[AsyncEngine]:
    """An engine for one schema version (no statement cached across a migration)."""
    engine = create_async_engine(async_url(url))
    try:
        yield engine
    finally:
        await engine.dispose()


async def test_0014_keys_the_rollups_by_project_and_migrates_down(postgres_server: Any) -> None:
    """A store at 0013 whose rollups hold history (recounted by job_rollups_rebuild(), and
    deltas not folded yet) of Ann's jobs in two projects and Bob's beside hers in one: at 0014
    every rollup equals a recount of ``jobs`` by project and owner, and keeps doing so as jobs
    change and the sweep folds; down again, 0013's shape exactly (tables, keys, indexes,
    trigger functions) with every rollup equal to a recount by owner, the triggers counting."""
    from jobs_common.migrations import downgrade
    from jobs_scheduler.adapters.rollups import fold
    from jobs_scheduler.migrate import MIGRATIONS, upgrade
    from jobs_scheduler.migrations.rollup_schema import OWNER_0009, OWNER_0014

    name, fresh = (f"t_rollups_{uuid.uuid4().hex[:10]}" for _ in range(2))
    url, fresh_url = await postgres_server.create(name), await postgres_server.create(fresh)
    try:
        await asyncio.to_thread(upgrade, fresh_url, "0013")
        shape_0013 = await rollup_shape(fresh_url)
        await asyncio.to_thread(upgrade, url, "0013")
        async with store(url) as engine, engine.begin() as connection:
            now: datetime = (await connection.execute(select(func.now()))).scalar_one()
            await write_history(connection, now)
            await connection.execute(text("SELECT job_rollups_rebuild()"))
            await write_history(connection, now)
            assert await mismatches(connection, OWNER_0009) == {}

        await asyncio.to_thread(upgrade, url)

        async with store(url) as engine, engine.begin() as connection:
            assert await mismatches(connection, OWNER_0014) == {}
            await write_history(connection, now)
            while await fold(connection, 7):
                pass
            assert await mismatches(connection, OWNER_0014) == {}
        keys = {table: key for table, name, key in (await rollup_shape(url))["constraints"]}
        for family, (key, _, grains) in ROLLUP_FAMILIES.items():
            for grain in grains:  # the sweep's merges and the recount rely on these
                assert keys[f"job_{family}_{grain}"] == f"PRIMARY KEY (bucket, {', '.join(key)})"

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0013")

        assert await rollup_shape(url) == shape_0013
        async with store(url) as engine, engine.begin() as connection:
            assert await mismatches(connection, OWNER_0009) == {}
            await write_history(connection, now)
            assert await mismatches(connection, OWNER_0009) == {}
    finally:
        await postgres_server.drop(name)
        await postgres_server.drop(fresh)


async def test_0015_keeps_earlier_policies_shared_and_names_unique_per_project(
    postgres_server: Any,
) -> None:
    """Policies stored before projects stay shared (every job naming one keeps it); from 0015
    a project has its own names (a policy and a schedule named as another project's is
    another); down again, one policy per name (the shared one) and every schedule kept."""
    from jobs_common.migrations import downgrade
    from jobs_scheduler.migrate import MIGRATIONS, upgrade

    name = f"t_names_{uuid.uuid4().hex[:10]}"
    url = await postgres_server.create(name)
    policy = (
        "INSERT INTO retry_policies (name, strategy, base_delay_ms, multiplier, max_delay_ms, "
        "jitter, created_by{extra}) VALUES ('gentle', 'fixed', $1, 1, 60000, false, "
        "'admin@example.com'{values})"
    )
    schedule = (
        "INSERT INTO schedules (id, name, cron, timezone, job_template, owner, project_id) "
        "VALUES ($1, 'nightly', '0 3 * * *', 'UTC', '{}', $2, $3)"
    )
    try:
        await asyncio.to_thread(upgrade, url, "0014")
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(policy.format(extra="", values=""), 1000)
        finally:
            await connection.close()

        await asyncio.to_thread(upgrade, url)
        team, other = uuid.uuid4(), uuid.uuid4()
        connection = await asyncpg.connect(url)
        try:
            assert await connection.fetch("SELECT name, project_id FROM retry_policies") == [
                ("gentle", None)
            ]
            for project, delay in ((team, 2000), (other, 3000)):
                await connection.execute(
                    policy.format(extra=", project_id", values=", $2"), delay, project
                )
            with pytest.raises(asyncpg.UniqueViolationError):  # one shared policy per name
                await connection.execute(policy.format(extra="", values=""), 4000)
            for owner, project in (("ann@example.com", team), ("bob@example.com", other)):
                await connection.execute(schedule, uuid.uuid4(), owner, project)
            with pytest.raises(asyncpg.UniqueViolationError):  # one per project, whoever owns it
                await connection.execute(schedule, uuid.uuid4(), "cy@example.com", team)
        finally:
            await connection.close()

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0014")
        connection = await asyncpg.connect(url)
        try:
            kept = await connection.fetch("SELECT name, base_delay_ms FROM retry_policies")
            assert [tuple(row) for row in kept] == [("gentle", 1000)]
            assert await connection.fetchval("SELECT count(*) FROM schedules") == 2
        finally:
            await connection.close()
    finally:
        await postgres_server.drop(name)


async def test_0016_gives_every_queue_with_jobs_its_row_and_migrates_down(
    postgres_server: Any,
) -> None:
    """A store at 0015 holding jobs of two projects in three (project, queue) pairs: at 0016
    each pair has its queue, with no limits and not paused, dated by its first job; a new
    pair cannot repeat one; down again, no queue table and the outbox as it was."""
    from jobs_common.migrations import downgrade
    from jobs_scheduler.migrate import MIGRATIONS, upgrade

    name = f"t_queues_{uuid.uuid4().hex[:10]}"
    url = await postgres_server.create(name)
    job = (
        "INSERT INTO jobs (id, type, priority, payload, submitted_by, project_id, status, "
        "max_attempts, attempt_limit, timeout_seconds, queue, created_at) VALUES "
        "($1, 'echo', 2, '{}', 'ann@example.com', $2, $3, 3, 3, 30, $4, now() - $5::text::interval)"
    )
    team, other = uuid.uuid4(), uuid.uuid4()
    try:
        await asyncio.to_thread(upgrade, url, "0015")
        connection = await asyncpg.connect(url)
        try:
            for project, queue, status, age in (
                (team, "default", "succeeded", "3 days"),
                (team, "default", "queued", "1 hour"),
                (team, "reports", "running", "2 hours"),
                (other, "default", "dead", "5 days"),
            ):
                await connection.execute(job, uuid.uuid4(), project, status, queue, age)
        finally:
            await connection.close()

        await asyncio.to_thread(upgrade, url)
        connection = await asyncpg.connect(url)
        try:
            rows = await connection.fetch(
                "SELECT project_id, name, max_concurrency, rate_limit, paused, created_by, "
                "now() - created_at > interval '2 days' AS old FROM queues ORDER BY created_at"
            )
            assert [tuple(row) for row in rows] == [
                (other, "default", None, None, False, "migration 0016", True),
                (team, "default", None, None, False, "migration 0016", True),
                (team, "reports", None, None, False, "migration 0016", False),
            ]
            with pytest.raises(asyncpg.UniqueViolationError):
                await connection.execute(
                    "INSERT INTO queues (id, project_id, name, created_by) "
                    "VALUES ($1, $2, 'reports', 'x')",
                    uuid.uuid4(),
                    team,
                )
        finally:
            await connection.close()

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0015")
        connection = await asyncpg.connect(url)
        try:
            assert await connection.fetchval("SELECT to_regclass('queues')") is None
            columns = await connection.fetch(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'outbox'"
            )
            assert {"project_id", "queue"}.isdisjoint(row[0] for row in columns)
            assert await connection.fetchval("SELECT count(*) FROM jobs") == 4
        finally:
            await connection.close()
    finally:
        await postgres_server.drop(name)


async def test_0018_gives_project_flow_its_quotas_and_migrates_down(postgres_server: Any) -> None:
    """A store at 0017 holding a project's weight: at 0018 (and 0021, its most running) the
    row keeps it with no quota, a quota below 1 is refused; down again, the row as it was and
    no quota column."""
    from jobs_common.migrations import downgrade
    from jobs_scheduler.migrate import MIGRATIONS, upgrade

    name = f"t_quotas_{uuid.uuid4().hex[:10]}"
    url = await postgres_server.create(name)
    team = uuid.uuid4()
    try:
        await asyncio.to_thread(upgrade, url, "0017")
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(
                "INSERT INTO project_flow (project_id, weight, updated_by) VALUES ($1, 7, 'ann')",
                team,
            )
        finally:
            await connection.close()

        await asyncio.to_thread(upgrade, url)
        connection = await asyncpg.connect(url)
        try:
            row = await connection.fetchrow(
                "SELECT weight, updated_by, max_waiting, max_submitted_per_day, max_running "
                "FROM project_flow"
            )
            assert tuple(row) == (7, "ann", None, None, None)
            for column in ("max_waiting", "max_submitted_per_day", "max_running"):
                with pytest.raises(asyncpg.CheckViolationError):
                    await connection.execute(f"UPDATE project_flow SET {column} = 0")
            await connection.execute(
                "UPDATE project_flow SET max_waiting = 5, max_submitted_per_day = 1, "
                "max_running = 2"
            )
        finally:
            await connection.close()

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0017")
        connection = await asyncpg.connect(url)
        try:
            columns = await connection.fetch(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'project_flow'"
            )
            assert {row[0] for row in columns} == {
                "project_id",
                "weight",
                "updated_by",
                "updated_at",
            }
            row = await connection.fetchrow("SELECT project_id, weight FROM project_flow")
            assert tuple(row) == (team, 7)
        finally:
            await connection.close()
    finally:
        await postgres_server.drop(name)


async def test_0020_indexes_the_unfinished_jobs_by_priority_too_and_migrates_down(
    postgres_server: Any,
) -> None:
    """At 0020 the unfinished jobs' index ends with the priority (a queue's depth by status and
    priority is an index-only scan) and the queue samples' tables exist; down to 0019, the
    index as 0016 made it and no samples."""
    from jobs_common.migrations import downgrade
    from jobs_scheduler.migrate import MIGRATIONS, upgrade

    name = f"t_samples_{uuid.uuid4().hex[:10]}"
    url = await postgres_server.create(name)
    index = "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_jobs_queue_unfinished'"
    try:
        await asyncio.to_thread(upgrade, url, "0020")
        connection = await asyncpg.connect(url)
        try:
            assert "(project_id, queue, status, priority)" in await connection.fetchval(index)
            for table in ("queue_samples", "queue_sample_minutes"):
                assert await connection.fetchval("SELECT to_regclass($1)", table) is not None
        finally:
            await connection.close()

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0019")
        connection = await asyncpg.connect(url)
        try:
            assert "(project_id, queue, status) WHERE" in await connection.fetchval(index)
            for table in ("queue_samples", "queue_sample_minutes"):
                assert await connection.fetchval("SELECT to_regclass($1)", table) is None
        finally:
            await connection.close()
    finally:
        await postgres_server.drop(name)


async def test_0022_marks_schedules_declared_in_code_and_migrates_down(
    postgres_server: Any,
) -> None:
    """A schedule stored at 0021 reads at 0022 as made through the API (no declaration); a
    declared one can be stored; down to 0021, both rows kept without the columns."""
    from jobs_common.migrations import downgrade
    from jobs_scheduler.migrate import MIGRATIONS, upgrade

    name = f"t_declared_{uuid.uuid4().hex[:10]}"
    url = await postgres_server.create(name)
    insert = (
        "INSERT INTO schedules (id, name, cron, timezone, job_template, owner, project_id) "
        "VALUES ($1, $2, '0 3 * * *', 'UTC', '{\"type\": \"simulate\"}', 'ann', $3)"
    )
    project = uuid.uuid4()
    try:
        await asyncio.to_thread(upgrade, url, "0021")
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(insert, uuid.uuid4(), "by-api", project)
        finally:
            await connection.close()

        await asyncio.to_thread(upgrade, url, "0022")
        connection = await asyncpg.connect(url)
        try:
            row = await connection.fetchrow("SELECT declared_in, declared_at FROM schedules")
            assert tuple(row) == (None, None)
            await connection.execute(insert, uuid.uuid4(), "in-code", project)
            await connection.execute(
                "UPDATE schedules SET declared_in = 'acme_jobs.reports', declared_at = now() "
                "WHERE name = 'in-code'"
            )
        finally:
            await connection.close()

        await asyncio.to_thread(downgrade, MIGRATIONS, url, "0021")
        connection = await asyncpg.connect(url)
        try:
            assert await connection.fetchval("SELECT count(*) FROM schedules") == 2
            assert not await connection.fetchval(
                "SELECT count(*) FROM information_schema.columns "
                "WHERE table_name = 'schedules' AND column_name LIKE 'declared_%'"
            )
        finally:
            await connection.close()
    finally:
        await postgres_server.drop(name)
