"""Console reads after a big prune, before and after the scheduler's upkeep
(docs/operations.md, "After a prune").

    python scripts/bench_store_upkeep.py      # JOBS=1000000 DAYS=30 BATCH=10000
    JOBS=1000000 DAYS=45 python scripts/bench_store_upkeep.py   # ~700k pruned (issue 35)

Creates a scratch database (migrated), loads JOBS finished jobs over DAYS days
(``history_loader``: an attempt and three events each; a quarter dead, their dead letters
resolved; a tenth cancelled), recounts the rollups and VACUUM ANALYZEs it (a store that grew
over days). Then: the console's reads (the dashboard's own queries, as the platform admin)
timed; the scheduler's retention sweep run pass after pass until nothing is due, on this
machine's PostgreSQL as it is configured; the reads again (dead rows nobody reclaimed); the
scheduler's upkeep (``app/store_upkeep.py``: ANALYZE, and VACUUM (ANALYZE) where autovacuum is
off or behind); the reads a third time. Before each round of reads the rollup deltas are
folded as a running scheduler folds them (its rollups sweep, every 2 s: ``fold_rollups``, a
transaction per batch of BATCH) until none is left, so the jobs' count reads folded rollups,
not the deltas the prune's deletes appended. Each read: median and max of READS (10) calls
after one warm-up. Prints the dead rows of ``jobs`` at each step, and of the rollup tables
after the last fold (the fold's own dead rows: nothing vacuums them with autovacuum off).
Drops the database at the end.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import partial
from typing import Any

import scratch_db
from history_loader import History, Loaded, load_job_store, unfolded_deltas
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import JobStatus
from jobs_common.db import create_engine
from jobs_common.jobstore import ROLLUPS
from jobs_common.tenancy import Scope
from jobs_dashboard.adapters.dead_letters import DeadLetterStore
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.domain.dead_letters import DeadLetterFilters, DeadLetterState
from jobs_dashboard.domain.query import JobFilters, JobListQuery, PageRequest, SortDirection
from jobs_scheduler.app.retention import Windows, prune
from jobs_scheduler.app.rollups import fold_rollups
from jobs_scheduler.app.store_upkeep import StoreUpkeep
from jobs_scheduler.app.unit_of_work import UnitOfWork
from jobs_scheduler.domain.retention import Retention
from jobs_scheduler.domain.vacuum import VacuumPolicy
from jobs_scheduler.migrate import upgrade_async

JOBS = int(os.environ.get("JOBS", "1000000"))
DAYS = int(os.environ.get("DAYS", "30"))
BATCH = int(os.environ.get("BATCH", "10000"))
READS = int(os.environ.get("READS", "10"))


def console_reads(engine: AsyncEngine) -> dict[str, Callable[[], Awaitable[Any]]]:
    """The reads of the console's jobs and dead-letter pages, as the dashboard runs them."""
    reader = JobReader(engine)
    letters = DeadLetterStore(engine)
    admin = Scope()
    everything = JobFilters(visibility=admin)
    return {
        "jobs, newest 20": partial(reader.list_jobs, JobListQuery(filters=everything)),
        "jobs, oldest 20": partial(
            reader.list_jobs, JobListQuery(filters=everything, direction=SortDirection.ASC)
        ),
        "jobs type=email, oldest 20": partial(
            reader.list_jobs,
            JobListQuery(
                filters=JobFilters(visibility=admin, type="email"),
                direction=SortDirection.ASC,
            ),
        ),
        "jobs status=dead, 20": partial(
            reader.list_jobs,
            JobListQuery(filters=JobFilters(visibility=admin, statuses=(JobStatus.DEAD,))),
        ),
        "dead letters, resolved 20": partial(
            letters.page,
            DeadLetterFilters(visibility=admin, state=DeadLetterState.RESOLVED),
            PageRequest(),
        ),
    }


async def timed(reads: dict[str, Callable[[], Awaitable[Any]]]) -> dict[str, tuple[float, float]]:
    """name -> (median ms, max ms)."""
    found = {}
    for name, read in reads.items():
        await read()
        ms = []
        for _ in range(READS):
            started = time.perf_counter()
            await read()
            ms.append((time.perf_counter() - started) * 1000)
        found[name] = (statistics.median(ms), max(ms))
    return found


async def dead_rows(engine: AsyncEngine) -> str:
    async with engine.connect() as connection:
        row = (
            await connection.execute(
                text(
                    "SELECT n_live_tup, n_dead_tup FROM pg_stat_user_tables WHERE relname = 'jobs'"
                )
            )
        ).one()
    return f"jobs: {row.n_live_tup:,} live, {row.n_dead_tup:,} dead"


async def rollup_dead_rows(engine: AsyncEngine) -> int:
    """Dead rows of the rollup tables (their deltas, and the grains the fold updated)."""
    tables = [table.name for family in ROLLUPS.values() for table in family.values()]
    async with engine.connect() as connection:
        found = await connection.scalar(
            text(
                "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables"
                " WHERE relname = ANY(:tables)"
            ),
            {"tables": tables},
        )
    return int(found or 0)


async def fold_all(engine: AsyncEngine) -> str:
    """The scheduler's rollups sweep until nothing is left to fold (it runs again at once
    after a full batch, else every 2 s: here, at once)."""
    started = time.perf_counter()
    folded = passes = 0
    while True:
        async with engine.begin() as connection:
            done = await fold_rollups(connection, BATCH)
            # its dead rows counted at its commit (the statistics printed next)
            await connection.execute(text("SELECT pg_stat_force_next_flush()"))
        passes += 1
        folded += done
        if done == 0:
            break
    left = await unfolded_deltas(engine)
    if left:  # no other folder runs here: the lock was ours, so nothing may be left
        raise RuntimeError(f"{left:,} rollup deltas still unfolded")
    took = time.perf_counter() - started
    return f"folded rollup deltas: {folded:,} in {passes} transactions, {took:.1f} s"


async def main() -> None:
    name = f"bench_upkeep_{uuid.uuid4().hex[:8]}"
    admin = create_engine(scratch_db.ADMIN_URL, pool_size=1)
    async with admin.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        print("server autovacuum:", await connection.scalar(text("SHOW autovacuum")))
    await admin.dispose()
    await scratch_db.create(name)
    url = scratch_db.url_of(name)
    engine = create_engine(url, pool_size=4)
    try:
        await upgrade_async(url)
        started = time.perf_counter()
        # the rollups recounted (the jobs' count reads them), VACUUM ANALYZE, CHECKPOINT
        await load_job_store(engine, History(jobs=JOBS, span=timedelta(days=DAYS)), Loaded())
        took = time.perf_counter() - started
        print(f"loaded {JOBS:,} finished jobs over {DAYS} days in {took:.0f} s")
        reads = console_reads(engine)
        print(await fold_all(engine))
        results = {"before the prune": await timed(reads)}

        upkeep = StoreUpkeep(
            engine, self_vacuum=True, policy=VacuumPolicy(min_dead_rows=100_000, dead_ratio=0.2)
        )
        sweep = partial(
            prune,
            keep=Retention(),
            windows=Windows(
                inbox=timedelta(days=7), poison=timedelta(days=30), audit=timedelta(days=90)
            ),
            limit=BATCH,
            pruned=upkeep.pruned,
        )
        work = UnitOfWork(engine)
        started = time.perf_counter()
        pruned = 0
        while (removed := await work.run(sweep)) >= BATCH:
            pruned += removed
        pruned += removed
        took = time.perf_counter() - started
        print(f"pruned {pruned:,} jobs in {took:.0f} s; {await dead_rows(engine)}")
        print(await fold_all(engine))
        results["after the prune, no vacuum"] = await timed(reads)

        started = time.perf_counter()
        done = await upkeep.maintain()
        print(
            f"scheduler upkeep in {time.perf_counter() - started:.1f} s; {await dead_rows(engine)}"
        )
        for table in done:
            action = f"VACUUM (ANALYZE), {table.vacuumed}" if table.vacuumed else "ANALYZE"
            print(
                f"  {table.table}: {action};"
                f" dead {table.dead_rows_before:,} -> {table.dead_rows_after:,}"
            )
        print(await fold_all(engine))
        print(f"rollup tables: {await rollup_dead_rows(engine):,} dead rows")
        results["after the scheduler's upkeep"] = await timed(reads)

        for phase, found in results.items():
            print(phase)
            for read, (median, worst) in found.items():
                print(f"  {read:<30} median {median:6.1f} ms, max {worst:6.1f} ms")
    finally:
        await engine.dispose()
        await scratch_db.drop(name)


if __name__ == "__main__":
    asyncio.run(main())
