"""A store that stays healthy (docs/operations.md, "After a prune"): after a retention pass
the tables it pruned are analyzed, and vacuumed by the scheduler where autovacuum is off (as on
this machine's PostgreSQL) unless self-vacuum is turned off; the dead-rows and autovacuum
gauges read the statistics; autovacuum turned off for one table is detected from its
reloptions, whatever the server's setting. Real PostgreSQL, a database per test."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_scheduler.adapters import store_stats
from jobs_scheduler.app.retention import Windows, prune
from jobs_scheduler.app.store_upkeep import AUTOVACUUM_OFF_WARNING, StoreUpkeep
from jobs_scheduler.app.unit_of_work import UnitOfWork
from jobs_scheduler.domain.retention import Retention
from jobs_scheduler.domain.vacuum import VacuumPolicy, VacuumReason, vacuum_reason

pytestmark = pytest.mark.integration

DAY = timedelta(days=1)
JOBS = 3_000
BATCH = 5_000  # one pass prunes them all and drains
POLICY = VacuumPolicy(min_dead_rows=100_000, dead_ratio=0.2)


async def old_jobs(engine: AsyncEngine, count: int) -> None:
    """``count`` succeeded jobs finished 30 days ago (past the 7-day retention), each with an
    attempt and an event, and one job kept."""
    async with engine.begin() as connection:
        await connection.execute(
            text(
                """
                INSERT INTO jobs (id, type, priority, payload, submitted_by, status, attempt,
                                  max_attempts, attempt_limit, timeout_seconds, finished_at)
                SELECT gen_random_uuid(), 'echo', 2, '{}'::jsonb, 'u@test.com', 'succeeded', 1, 3,
                       3,
                       60, now() - interval '30 days' - n * interval '1 second'
                  FROM generate_series(1, :count) AS n
                UNION ALL
                SELECT gen_random_uuid(), 'echo', 2, '{}'::jsonb, 'u@test.com', 'succeeded', 1, 3,
                       3,
                       60, now()
                """
            ),
            {"count": count},
        )
        await connection.execute(
            text(
                "INSERT INTO job_attempts (job_id, attempt, status)"
                " SELECT id, 1, 'succeeded' FROM jobs"
            )
        )
        await connection.execute(
            text(
                "INSERT INTO job_events (job_id, attempt, to_status, reason)"
                " SELECT id, 1, 'succeeded', 'r' FROM jobs"
            )
        )


async def retention_pass(engine: AsyncEngine, upkeep: StoreUpkeep) -> int:
    sweep = partial(
        prune,
        keep=Retention(),
        windows=Windows(inbox=7 * DAY, poison=30 * DAY, audit=90 * DAY),
        limit=BATCH,
        pruned=upkeep.pruned,
    )
    step = upkeep.after_pass(partial(UnitOfWork(engine).run, sweep), full_batch=BATCH)
    return await step()


async def stats_of(engine: AsyncEngine, table: str) -> Any:
    async with engine.connect() as connection:
        return (
            await connection.execute(
                text(
                    "SELECT n_live_tup, n_dead_tup, last_analyze, last_vacuum"
                    " FROM pg_stat_user_tables WHERE relname = :table"
                ),
                {"table": table},
            )
        ).one()


def upkeep_logs(caplog: pytest.LogCaptureFixture) -> dict[str, Any]:
    return {
        record.__dict__["table"]: record.__dict__
        for record in caplog.records
        if record.__dict__.get("action") == "store_upkeep"
    }


async def test_a_pass_analyzes_and_vacuums_what_it_pruned_where_autovacuum_is_off(
    db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await old_jobs(db, JOBS)
    upkeep = StoreUpkeep(db, self_vacuum=True, policy=POLICY)
    caplog.set_level(logging.INFO, logger="jobs_scheduler.app.store_upkeep")

    assert await retention_pass(db, upkeep) >= JOBS

    for table in ("jobs", "job_attempts", "job_events"):
        row = await stats_of(db, table)
        assert row.last_analyze is not None, table
        assert row.last_vacuum is not None, table  # this server runs with autovacuum off
        assert row.n_dead_tup == 0, table
    logged = upkeep_logs(caplog)["jobs"]
    assert logged["vacuumed"] is True
    assert logged["reason"] == VacuumReason.AUTOVACUUM_OFF.value
    assert logged["dead_rows_before"] >= JOBS
    assert logged["dead_rows_after"] == 0
    assert logged["live_rows_after"] == 1
    assert upkeep.pending == {}


async def test_with_self_vacuum_off_a_pass_only_analyzes_and_says_what_needs_a_vacuum(
    db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await old_jobs(db, JOBS)
    upkeep = StoreUpkeep(db, self_vacuum=False, policy=POLICY)
    caplog.set_level(logging.INFO, logger="jobs_scheduler.app.store_upkeep")

    await retention_pass(db, upkeep)

    row = await stats_of(db, "jobs")
    assert row.last_analyze is not None
    assert row.last_vacuum is None
    assert row.n_dead_tup >= JOBS
    logged = upkeep_logs(caplog)["jobs"]
    assert logged["vacuumed"] is False
    assert logged["reason"] == VacuumReason.AUTOVACUUM_OFF.value
    assert logged["levelname"] == "WARNING"


async def test_the_gauges_report_dead_rows_and_autovacuum(db: AsyncEngine) -> None:
    await old_jobs(db, JOBS)
    upkeep = StoreUpkeep(db, self_vacuum=False, policy=POLICY)
    await retention_pass(db, upkeep)
    dead = (await stats_of(db, "jobs")).n_dead_tup
    assert dead >= JOBS

    await upkeep.observe()

    gauge = partial(REGISTRY.get_sample_value, labels={"table": "jobs"})
    assert gauge("jobstore_dead_rows") == dead
    async with db.connect() as connection:
        server_on = (await connection.scalar(text("SHOW autovacuum"))) == "on"
    assert gauge("jobstore_autovacuum_enabled") == (1 if server_on else 0)
    assert upkeep.warnings() == ([] if server_on else [AUTOVACUUM_OFF_WARNING])


async def test_autovacuum_off_for_one_table_is_detected_from_its_reloptions(
    db: AsyncEngine,
) -> None:
    async with db.begin() as connection:
        await connection.execute(text("ALTER TABLE job_logs SET (autovacuum_enabled = false)"))
        await connection.execute(text("ALTER TABLE inbox SET (autovacuum_enabled = off)"))
    async with db.connect() as connection:
        found = await store_stats.table_stats(connection, ["jobs", "job_logs", "inbox"])
        server_on = await store_stats.server_autovacuum(connection)
        shown = await connection.scalar(text("SHOW autovacuum"))

    assert server_on == (shown == "on")
    assert found["jobs"].autovacuum_enabled
    assert not found["job_logs"].autovacuum_enabled
    assert not found["inbox"].autovacuum_enabled
    # As in production (the server's autovacuum on): the table's own setting decides.
    dead_logs = type(found["job_logs"])("job_logs", 10, 5, autovacuum_enabled=False)
    assert (
        vacuum_reason(dead_logs, server_autovacuum=True, policy=POLICY)
        == VacuumReason.AUTOVACUUM_OFF_FOR_TABLE
    )
    upkeep = StoreUpkeep(db, self_vacuum=True, policy=POLICY)
    await upkeep.observe()
    assert {"job_logs", "inbox"} <= set(upkeep.autovacuum_off)
    assert "jobs" not in upkeep.autovacuum_off or not server_on


async def test_the_sweep_vacuums_a_table_past_the_threshold_that_nobody_pruned(
    db: AsyncEngine,
) -> None:
    """Updates leave dead rows with no prune (the rollup fold's deletes too): where autovacuum
    is off the periodic sweep vacuums a table past the threshold, and only such a table."""
    async with db.begin() as connection:
        server_on = (await connection.scalar(text("SHOW autovacuum"))) == "on"
        if server_on:
            await connection.execute(text("ALTER TABLE jobs SET (autovacuum_enabled = false)"))
            await connection.execute(
                text("ALTER TABLE job_attempts SET (autovacuum_enabled = false)")
            )
    await old_jobs(db, 300)
    async with db.begin() as connection:
        await connection.execute(text("UPDATE jobs SET attempt = 2"))  # 301 dead rows
        await connection.execute(text("DELETE FROM job_attempts WHERE random() < 0.1"))
        await connection.execute(text("SELECT pg_stat_force_next_flush()"))
    assert (await stats_of(db, "jobs")).n_dead_tup >= 300
    policy = VacuumPolicy(min_dead_rows=100, dead_ratio=0.2)

    await StoreUpkeep(db, self_vacuum=True, policy=policy).observe()

    jobs_after, attempts_after = await stats_of(db, "jobs"), await stats_of(db, "job_attempts")
    assert jobs_after.n_dead_tup == 0 and jobs_after.last_vacuum is not None
    assert attempts_after.last_vacuum is None  # about 30 dead rows: under the threshold
