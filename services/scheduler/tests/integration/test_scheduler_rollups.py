"""The rollups (migrations 0009, 0014): the running scheduler's writes append deltas that its
sweep folds into the per-minute and per-hour rollups; one folder at a time; a fold that does
not commit folds nothing; a fold takes at most its batch; the figures are kept by project and
owner through the triggers, the folds and a rebuild. (That rollups equal a full count of
``jobs`` on random histories is the dashboard's test_dashboard_rollups_property.py.)"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import Table, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.jobstore import ROLLUPS, jobs
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.rollups import fold, rebuild_rollups
from jobs_scheduler.migrations.rollup_schema import OWNER_0014
from jobs_scheduler.service import Runtime
from jobs_testing.waiting import eventually

from .conftest import job_result, next_dispatch, submitted, wait_status
from .rollup_figures import MEMBERS, mismatches, rolled_up, write_history

pytestmark = pytest.mark.integration

COUNT_DELTAS, COUNTS_MINUTE = ROLLUPS["counts"]["delta"], ROLLUPS["counts"]["minute"]


async def count(db: AsyncEngine, table: Table) -> int:
    async with db.connect() as connection:
        return int(await connection.scalar(select(func.count()).select_from(table)) or 0)


async def by_status(db: AsyncEngine, table: Table) -> dict[str, int]:
    async with db.connect() as connection:
        rows = await connection.execute(
            select(table.c.status, func.sum(table.c.jobs)).group_by(table.c.status)
        )
        return {status: int(n) for status, n in rows}


async def insert_jobs(db: AsyncEngine, n: int, **values: Any) -> None:
    rows = [
        {
            "id": uuid.uuid4(),
            "type": "echo",
            "priority": 1 + i % 3,
            "payload": {},
            "submitted_by": f"u{i % 4}@test.com",
            "status": "queued",
            "max_attempts": 3,
            "attempt_limit": 3,
            "timeout_seconds": 30,
            **values,
        }
        for i in range(n)
    ]
    async with db.begin() as connection:
        await connection.execute(insert(jobs), rows)


async def test_the_running_scheduler_folds_what_its_writes_appended(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    messages = [submitted() for _ in range(5)]
    for message in messages:
        await bus.publisher.publish(topology.SUBMITTED, message)
    for _ in messages:
        await next_dispatch(bus)
    for message in messages:
        await bus.publisher.publish(topology.RESULTS, job_result(message.job_id, 1))
    for message in messages:
        await wait_status(db, message.job_id, "succeeded")

    async def folded() -> bool:
        return all([await count(db, family["delta"]) == 0 for family in ROLLUPS.values()])

    await eventually(folded, timeout=15, what="the rollup sweep folding every delta")
    # Every job passed through pending and queued; the rows counting those went at zero.
    for grain in ("minute", "hour", "day"):
        assert await by_status(db, ROLLUPS["counts"][grain]) == {"succeeded": 5}
    async with db.connect() as connection:
        for table in (ROLLUPS["finishes"]["minute"], ROLLUPS["runtimes"]["day"]):
            # finished, and with a runtime (started and finished)
            assert await connection.scalar(select(func.sum(table.c.jobs))) == 5


async def test_one_folder_at_a_time_and_an_uncommitted_fold_folds_nothing(
    db: AsyncEngine,
) -> None:
    await insert_jobs(db, 40)
    pending = await count(db, COUNT_DELTAS)
    assert pending > 0
    async with db.connect() as first, db.connect() as second:
        async with first.begin():
            assert await fold(first, 10_000) == pending
            async with second.begin():
                assert await fold(second, 10_000) == 0  # the first holds the folder's lock
            await first.rollback()  # as if the replica died before its commit
    assert await count(db, COUNT_DELTAS) == pending
    assert await count(db, COUNTS_MINUTE) == 0
    async with db.begin() as connection:
        assert await fold(connection, 10_000) == pending
    assert await by_status(db, COUNTS_MINUTE) == {"queued": 40}


async def test_a_fold_takes_at_most_its_batch_and_the_rest_next_time(db: AsyncEngine) -> None:
    for _ in range(5):  # five statements, five delta groups each at least
        await insert_jobs(db, 8)
    deltas = await count(db, COUNT_DELTAS)
    async with db.begin() as connection:
        assert await fold(connection, 3) == 3
    assert await count(db, COUNT_DELTAS) == deltas - 3
    while True:
        async with db.begin() as connection:
            if not await fold(connection, 3):
                break
    assert await by_status(db, COUNTS_MINUTE) == {"queued": 40}
    assert await count(db, COUNT_DELTAS) == 0


async def test_the_rollups_count_by_project(db: AsyncEngine) -> None:
    """Ann's jobs in two projects, Ann's and Bob's in one (statements that span them all):
    captured, partly folded, all folded and rebuilt, the rollups equal a recount of ``jobs`` by
    project, whoever submitted the jobs."""
    async with db.connect() as connection:
        now: datetime = (await connection.execute(select(func.now()))).scalar_one()
    async with db.begin() as connection:
        await write_history(connection, now)
        assert await mismatches(connection, OWNER_0014) == {}  # all in the deltas
    async with db.begin() as connection:
        assert await fold(connection, 5) == 5
        assert await mismatches(connection, OWNER_0014) == {}
        await write_history(connection, now)  # in the folder's transaction, after its fold
        while await fold(connection, 10_000):
            pass
        assert not await connection.scalar(select(func.count()).select_from(COUNT_DELTAS))
        assert await mismatches(connection, OWNER_0014) == {}
        days = await rolled_up(connection, "counts", "day", OWNER_0014)
        assert {project for _, project, *_ in days} == {project for project, _ in MEMBERS}
    async with db.begin() as connection:
        await rebuild_rollups(connection)
        assert await mismatches(connection, OWNER_0014) == {}
