"""Retention under load: prune a job store holding history while jobs keep being written.

    python scripts/bench_retention.py            # JOBS=1000000 DAYS=30 BATCH=1000

Creates a scratch database (migrated), loads JOBS finished jobs (``history_loader``: one attempt
and three events each, finish times spread over DAYS days, a quarter of them dead with resolved
letters, a tenth cancelled), then
runs the scheduler's retention sweep (``app/retention.py``, the defaults: succeeded and
cancelled 7 days, dead 30) pass after pass until nothing is due, while a writer keeps
inserting jobs and moving them through their statuses, one short transaction each, as the
scheduler does. Prints: rows pruned per second, the pass times, the writer's transaction
latency (p50, p99, max) during pruning against before it, the transactions seen waiting on a
lock (sampled from pg_stat_activity every 50 ms), and the dead tuples left in each table
(pg_stat_user_tables) before and after a VACUUM. Drops the database at the end.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

import scratch_db
from history_loader import TABLES, History, load_jobs, vacuum_analyze
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.db import create_engine
from jobs_scheduler.app.retention import Windows, prune
from jobs_scheduler.app.unit_of_work import UnitOfWork
from jobs_scheduler.domain.retention import Retention
from jobs_scheduler.migrate import upgrade_async

JOBS = int(os.environ.get("JOBS", "1000000"))
DAYS = int(os.environ.get("DAYS", "30"))
BATCH = int(os.environ.get("BATCH", "1000"))


@dataclass
class Writer:
    """Jobs written as the scheduler writes them: insert, then two status moves, each its
    own short transaction; every transaction's latency kept, by phase."""

    engine: AsyncEngine
    phase: str = "before"
    latencies: dict[str, list[float]] = field(default_factory=dict)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            job_id = uuid.uuid4()
            statements = [
                (
                    "INSERT INTO jobs (id, type, priority, payload, submitted_by, status, attempt,"
                    " max_attempts, attempt_limit, timeout_seconds) VALUES (:id, 'email', 2,"
                    " '{}', 'live@test.com', 'queued', 1, 3, 3, 60)"
                ),
                "UPDATE jobs SET status = 'running', updated_at = now() WHERE id = :id",
                (
                    "UPDATE jobs SET status = 'succeeded', finished_at = now(), updated_at = now()"
                    " WHERE id = :id"
                ),
            ]
            for statement in statements:
                started = time.perf_counter()
                async with self.engine.begin() as connection:
                    await connection.execute(text(statement), {"id": job_id})
                self.latencies.setdefault(self.phase, []).append(time.perf_counter() - started)
            await asyncio.sleep(0.005)


async def lock_waits(engine: AsyncEngine, stop: asyncio.Event) -> tuple[int, int]:
    """(samples, samples with a backend waiting on a lock) while pruning runs."""
    samples = waiting = 0
    async with engine.connect() as connection:
        while not stop.is_set():
            found = await connection.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            )
            samples += 1
            waiting += 1 if found else 0
            await connection.commit()
            await asyncio.sleep(0.05)
    return samples, waiting


async def dead_tuples(engine: AsyncEngine) -> dict[str, tuple[int, int]]:
    async with engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT relname, n_live_tup, n_dead_tup FROM pg_stat_user_tables "
                "WHERE relname = ANY(:tables)"
            ),
            {"tables": list(TABLES)},
        )
        return {row.relname: (row.n_live_tup, row.n_dead_tup) for row in rows}


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    ms = sorted(v * 1000 for v in values)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, max {ms[-1]:.1f} ms"


async def main() -> None:
    name = f"bench_retention_{uuid.uuid4().hex[:8]}"
    await scratch_db.create(name)
    url = scratch_db.url_of(name)
    engine = create_engine(url, pool_size=4)
    try:
        await upgrade_async(url)
        started = time.perf_counter()
        async with engine.begin() as connection:
            await load_jobs(connection, History(jobs=JOBS, span=timedelta(days=DAYS)))
        await vacuum_analyze(engine)
        loaded_in = time.perf_counter() - started
        print(f"loaded {JOBS:,} finished jobs over {DAYS} days in {loaded_in:.0f} s")

        writer = Writer(engine)
        stop_writer = asyncio.Event()
        writing = asyncio.create_task(writer.run(stop_writer))
        await asyncio.sleep(5)  # the writer's latency before pruning
        writer.phase = "pruning"
        stop_sampling = asyncio.Event()
        sampling = asyncio.create_task(lock_waits(engine, stop_sampling))
        work = UnitOfWork(engine)
        keep = Retention()
        windows = Windows(
            inbox=timedelta(days=7), poison=timedelta(days=30), audit=timedelta(days=90)
        )
        passes: list[float] = []
        pruned = 0
        began = time.perf_counter()
        while True:
            one = time.perf_counter()
            removed = await work.run(partial(prune, keep=keep, windows=windows, limit=BATCH))
            passes.append(time.perf_counter() - one)
            pruned += removed
            if removed < BATCH:
                break
        elapsed = time.perf_counter() - began
        stop_sampling.set()
        samples, waiting = await sampling
        writer.phase = "after"
        await asyncio.sleep(2)
        stop_writer.set()
        await writing
        before_vacuum = await dead_tuples(engine)
        async with engine.connect() as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            await connection.execute(text("VACUUM"))
        after_vacuum = await dead_tuples(engine)

        print(f"pruned {pruned:,} jobs (each with its attempt, three events and any letter)")
        rate = pruned / elapsed
        print(f"  in {elapsed:.1f} s: {rate:,.0f} jobs/s, {len(passes)} passes of <= {BATCH}")
        print(f"  pass time: {quantiles(passes)}")
        print(f"  writer before pruning:  {quantiles(writer.latencies.get('before', []))}")
        print(f"  writer while pruning:   {quantiles(writer.latencies.get('pruning', []))}")
        print(f"  writer after pruning:   {quantiles(writer.latencies.get('after', []))}")
        print(f"  samples with a backend waiting on a lock: {waiting} of {samples} (every 50 ms)")
        print("  dead tuples (live, dead) before VACUUM -> after:")
        for table in TABLES:
            live, dead = before_vacuum.get(table, (0, 0))
            _, dead_after = after_vacuum.get(table, (0, 0))
            print(f"    {table:14} live {live:>9,}  dead {dead:>9,} -> {dead_after:,}")
    finally:
        await engine.dispose()
        await scratch_db.drop(name)


if __name__ == "__main__":
    asyncio.run(main())
