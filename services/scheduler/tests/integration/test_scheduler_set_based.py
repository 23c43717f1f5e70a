"""Running, heartbeat and result messages are applied set-based: one statement per table
per batch, however many jobs the batch touches (issue 6, point 3), with the same statement
text whatever the batch size (so it is compiled and prepared once)."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import pytest
from sqlalchemy import event, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobRunning, utcnow
from jobs_common.jobstore import jobs
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.heartbeats import apply_heartbeats
from jobs_scheduler.app.intake import record_jobs
from jobs_scheduler.app.results import apply_results
from jobs_scheduler.app.running import apply_running
from jobs_scheduler.service import Runtime, job_defaults
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import heartbeat, job_result, submitted

pytestmark = pytest.mark.integration

JOBS = 30
WRITE = re.compile(r"^\s*(UPDATE|INSERT INTO|DELETE FROM)\s+(\w+)", re.IGNORECASE)


@contextmanager
def writes(engine: AsyncEngine) -> Iterator[Counter[str]]:
    """Count the statements that write each table, e.g. ``{"UPDATE jobs": 1}``."""
    counted: Counter[str] = Counter()

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if match := WRITE.match(statement):
            counted[f"{match.group(1).upper()} {match.group(2)}"] += 1

    event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        yield counted
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", count)


@contextmanager
def statements(engine: AsyncEngine) -> Iterator[set[str]]:
    """The distinct SQL texts sent to PostgreSQL."""
    seen: set[str] = set()

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.add(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def someone_waits_for_a_lock(db: AsyncEngine) -> bool:
    async with db.connect() as watcher:
        waiting = await watcher.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return bool(waiting.scalar())


T = TypeVar("T")


async def beside_a_results_batch(
    db: AsyncEngine, low: Any, high: Any, work: Callable[[], Coroutine[Any, Any, T]]
) -> T:
    """Run ``work`` while another transaction, locking in id order as a results batch does,
    holds job ``low``, and asks for ``high`` once ``work`` waits for a lock; ``work``'s answer
    (a deadlock fails one of the two)."""
    async with db.connect() as other:
        other_batch = await other.begin()
        await other.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
        await other.execute(select(jobs.c.id).where(jobs.c.id == low).with_for_update())
        working = asyncio.create_task(work())
        await eventually(partial(someone_waits_for_a_lock, db), what="work waiting for a lock")
        # The results batch's next lock: granted at once, never a deadlock.
        await other.execute(select(jobs.c.id).where(jobs.c.id == high).with_for_update())
        await other_batch.commit()
        return await asyncio.wait_for(working, 10)


async def queued_jobs(bus: RabbitBus, db: AsyncEngine, count: int) -> list[Any]:
    messages = [submitted(priority=1) for _ in range(count)]
    for message in messages:
        await bus.publisher.publish(topology.SUBMITTED, message)
    ids = [m.job_id for m in messages]

    async def all_queued() -> bool:
        async with db.connect() as connection:
            rows = await connection.execute(
                select(jobs.c.status).where(jobs.c.id.in_(ids), jobs.c.status == "queued")
            )
            return len(rows.all()) == count

    await eventually(all_queued, what="every job queued")
    return ids


async def test_statement_texts_do_not_depend_on_the_batch_size(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime, scheduler_settings: Settings
) -> None:
    defaults = job_defaults(scheduler_settings)
    ids = await queued_jobs(bus, db, 10)
    texts: list[set[str]] = []
    for batch in (ids[:3], ids[3:]):
        now = utcnow()
        with statements(db) as seen:
            async with db.begin() as connection:
                changes = Changes()
                starts = [
                    JobRunning(job_id=i, attempt=1, worker_id="w-a", started_at=now) for i in batch
                ]
                await apply_running(connection, changes, starts, defaults)
                beats = [heartbeat("w-a", *((i, 1) for i in batch))]
                await apply_heartbeats(connection, changes, beats, defaults)
                results = [job_result(i, 1, worker_id="w-a") for i in batch]
                await apply_results(connection, changes, results, defaults)
                await changes.flush(connection)
        texts.append(seen)
    assert texts[0] == texts[1]


async def test_a_batch_of_starts_beats_and_results_writes_each_table_once(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime, scheduler_settings: Settings
) -> None:
    defaults = job_defaults(scheduler_settings)
    ids = await queued_jobs(bus, db, JOBS)
    now = utcnow()
    starts = [JobRunning(job_id=i, attempt=1, worker_id="w-a", started_at=now) for i in ids]
    with writes(db) as counted:
        async with db.begin() as connection:
            applied = await apply_running(connection, Changes(), starts, defaults)
    assert applied == [True] * JOBS
    assert counted == {"UPDATE jobs": 1, "UPDATE job_attempts": 1}

    beats = [heartbeat("w-a", *((i, 1) for i in ids[:20])), heartbeat("w-b", (ids[20], 1))]
    with writes(db) as counted:
        async with db.begin() as connection:
            renewed = await apply_heartbeats(connection, Changes(), beats, defaults)
    assert renewed == 20  # w-b does not hold its attempt: told to stop, not renewed
    assert counted == {"INSERT INTO workers": 1, "UPDATE jobs": 1}  # both workers, all leases

    results = [job_result(i, 1, worker_id="w-a") for i in ids]
    with writes(db) as counted:
        async with db.begin() as connection:
            outcomes = await apply_results(connection, Changes(), results, defaults)
    assert outcomes == {"applied": JOBS, "stale": 0}
    assert counted == {"UPDATE jobs": 1, "UPDATE job_attempts": 1}
    async with db.connect() as connection:
        statuses = (
            await connection.execute(select(jobs.c.status).where(jobs.c.id.in_(ids)))
        ).scalars()
        assert set(statuses) == {"succeeded"}


async def test_a_lone_job_is_recorded_without_a_savepoint_several_under_one(
    db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """The savepoint that lets a refused job be split off costs two round trips; a lone job
    has no neighbours to save (its failure fails the transaction either way)."""
    defaults = job_defaults(scheduler_settings)
    seen: list[set[str]] = []
    for arrived in ([submitted()], [submitted(), submitted()]):
        with statements(db) as texts:
            async with db.begin() as connection:
                recorded = await record_jobs(connection, Changes(), arrived, defaults)
        assert recorded["applied"] == len(arrived)
        seen.append({text.split()[0].upper() for text in texts})
    assert "SAVEPOINT" not in seen[0]
    assert "SAVEPOINT" in seen[1]


async def test_a_heartbeat_takes_its_job_locks_in_id_order_so_it_never_deadlocks_a_results_batch(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime, scheduler_settings: Settings
) -> None:
    """A heartbeat lists a running attempt (renewed) and a queued one (started from the
    heartbeat) while another batch, locking in id order as every results batch does, holds
    the lower job and then asks for the higher. A heartbeat that locked the running row first
    (its renewal) and the queued one after deadlocked with it (seen in a flood: the heartbeat
    was requeued, its leases ran out, four healthy jobs ran twice); locking both in id order
    first, it waits for the other batch instead."""
    defaults = job_defaults(scheduler_settings)
    low, high = sorted(await queued_jobs(bus, db, 2))
    async with db.begin() as connection:
        running = [JobRunning(job_id=high, attempt=1, worker_id="w-a", started_at=utcnow())]
        assert await apply_running(connection, Changes(), running, defaults) == [True]

    async def beat() -> int:
        async with db.begin() as connection:
            beats = [heartbeat("w-a", (high, 1), (low, 1))]
            return await apply_heartbeats(connection, Changes(), beats, defaults)

    # Both held: one renewed, one started.
    assert await beside_a_results_batch(db, low, high, beat) == 2
    async with db.connect() as connection:
        rows = await connection.execute(
            select(jobs.c.id, jobs.c.status, jobs.c.worker_id).where(jobs.c.id.in_([low, high]))
        )
        assert {(row.status, row.worker_id) for row in rows} == {("running", "w-a")}


async def test_a_batch_of_starts_locks_in_id_order_whatever_its_plan(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime, scheduler_settings: Settings
) -> None:
    """Two attempts start in one batch while a results batch (locking in id order) holds the
    lower job and then asks for the higher. The starts' UPDATE ... FROM unnest locks in its
    plan's order: with a hash join over the table, the heap's, here the higher job first
    (the lower one's row was rewritten since). Without taking its locks in id order first it
    deadlocked with the results batch (seen in a flood: the results were applied a deadlock
    timeout late); now it waits for it."""
    defaults = job_defaults(scheduler_settings)
    low, high = sorted(await queued_jobs(bus, db, 2))
    async with db.begin() as connection:  # the lower row's new version goes after the higher
        await connection.execute(update(jobs).where(jobs.c.id == low).values(updated_at=func.now()))

    async def start_both() -> list[bool]:
        async with db.begin() as connection:
            await connection.exec_driver_sql("SET LOCAL enable_nestloop = off")
            await connection.exec_driver_sql("SET LOCAL enable_mergejoin = off")
            now = utcnow()
            starts = [
                JobRunning(job_id=i, attempt=1, worker_id="w-a", started_at=now)
                for i in (low, high)
            ]
            return await apply_running(connection, Changes(), starts, defaults)

    assert await beside_a_results_batch(db, low, high, start_both) == [True, True]
