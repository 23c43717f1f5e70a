"""The console's reads against a large job store, at the adapter (no HTTP):
``make bench-reads`` (JOBS=10000000 by default; DATABASE=name keeps and reuses the store).

Loads JOBS finished jobs (10 owners, 4 types, 3 priorities; 5 % dead, 3 % cancelled; created
over the last DAYS days, 6 by default so the default retention keeps them) into a scratch
database with one set-based INSERT per million, the rollup triggers off, then recounts the
rollups once (``job_rollups_rebuild()``, as migration 0009 does for an existing store) and
analyzes. Then times every read the console's pages make through the dashboard's own
``JobReader`` (a user and an admin; median and p95 of CALLS calls each) and prints the table
with the size of ``jobs`` and of the rollup tables. The figures are what docs/scaling.md,
"Reads at ten million jobs", quotes; nothing here asserts on speed.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import scratch_db

from jobs_common.contracts import JobStatus
from jobs_common.db import create_engine
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.domain.query import (
    CreatedRange,
    JobFilters,
    JobListQuery,
    PageRequest,
    SortDirection,
    SortField,
    Visibility,
)
from jobs_scheduler.migrate import upgrade_async

JOBS = int(os.environ.get("JOBS", "10000000"))
DAYS = float(os.environ.get("DAYS", "6"))
CALLS = int(os.environ.get("CALLS", "20"))
KEEP = os.environ.get("DATABASE")  # a name: kept after the run, and reused when it exists
CHUNK = 1_000_000
USER = "user3@test.com"

LOAD = """
INSERT INTO jobs (id, type, priority, payload, submitted_by, project_id, status, max_attempts,
  attempt_limit, timeout_seconds, created_at, updated_at, started_at, finished_at)
SELECT gen_random_uuid(),
  (ARRAY['simulate', 'email', 'report_generation', 'image_resize'])[1 + i % 4], 1 + i % 3,
  '{"n": 1}', 'user' || (i % 10) || '@test.com',
  jobs_personal_project('user' || (i % 10) || '@test.com'),
  CASE WHEN i % 20 = 0 THEN 'dead' WHEN i % 33 = 0 THEN 'cancelled' ELSE 'succeeded' END,
  3, 3, 30, at, at, at, at + ((50 + (i % 97) * 13) || ' milliseconds')::interval
FROM generate_series($1::bigint, $2::bigint) i,
  LATERAL (SELECT now() - make_interval(secs => i * $3::double precision) AS at) t
"""


async def prepare(name: str) -> float:
    """Create, migrate and load the store unless it exists; returns the seconds it took."""
    if not await scratch_db.create(name, reuse=True):
        return 0.0
    started = time.perf_counter()
    await upgrade_async(
        scratch_db.url_of(name).replace("postgresql://", "postgresql+asyncpg://", 1)
    )
    store = await asyncpg.connect(scratch_db.url_of(name))
    try:
        await store.execute("ALTER TABLE jobs DISABLE TRIGGER USER")
        spacing = DAYS * 86_400 / JOBS
        for first in range(1, JOBS + 1, CHUNK):
            await store.execute(LOAD, first, min(JOBS, first + CHUNK - 1), spacing)
            print(f"  loaded {min(JOBS, first + CHUNK - 1):,} jobs", flush=True)
        await store.execute("ALTER TABLE jobs ENABLE TRIGGER USER")
        await store.execute("SELECT job_rollups_rebuild()")
        await store.execute("VACUUM ANALYZE")
    finally:
        await store.close()
    return time.perf_counter() - started


async def sizes(name: str) -> dict[str, str]:
    store = await asyncpg.connect(scratch_db.url_of(name))
    try:
        rows = await store.fetch(
            "SELECT relname, n_live_tup FROM pg_stat_user_tables "
            "WHERE relname = 'jobs' OR relname LIKE 'job\\_%\\_%' ORDER BY relname"
        )
        found = {row["relname"]: f"{row['n_live_tup']:,}" for row in rows}
        found["database"] = await store.fetchval(
            "SELECT pg_size_pretty(pg_database_size(current_database()))"
        )
        return found
    finally:
        await store.close()


def reads(reader: JobReader, now: datetime) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Each read of the console's pages, for a user (U) and an admin (A)."""
    everyone, user = Visibility(None), Visibility(USER)
    last_day = CreatedRange(now - timedelta(days=1, seconds=17), now - timedelta(seconds=5))

    def page(visibility: Visibility, **query: Any) -> Callable[[], Awaitable[Any]]:
        filters = query.pop("filters", {})
        return lambda: reader.list_jobs(JobListQuery(JobFilters(visibility, **filters), **query))

    return {
        "overview: analytics (U)": lambda: reader.analytics(user, CreatedRange()),
        "overview: analytics (A)": lambda: reader.analytics(everyone, CreatedRange()),
        "overview: series 5 min x 12 (A)": lambda: reader.series(
            everyone, bucket_minutes=5, buckets=12
        ),
        "analytics, last day, unaligned (A)": lambda: reader.analytics(everyone, last_day),
        "jobs, newest 20 (U)": page(user),
        "jobs, newest 20 (A)": page(everyone),
        "jobs, type=email oldest first (A)": page(
            everyone, filters={"type": "email"}, direction=SortDirection.ASC
        ),
        "jobs, status=dead (A)": page(everyone, filters={"statuses": (JobStatus.DEAD,)}),
        "jobs, sort by priority (U)": page(user, sort_by=SortField.PRIORITY),
        "jobs, sort by updatedAt (A)": page(everyone, sort_by=SortField.UPDATED_AT),
        "jobs, created last day (A)": page(everyone, filters={"created": last_day}),
        "jobs, page 500 by number (A)": page(everyone, page=PageRequest(500, 20)),
    }


async def timed(read: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    await read()  # warm
    samples = []
    for _ in range(CALLS):
        started = time.perf_counter()
        await read()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, int(0.95 * len(samples)) - 1)]


async def deep_page(reader: JobReader) -> tuple[int, float]:
    """Follow nextCursor 200 pages in: the cost of the last page."""
    query = JobListQuery(JobFilters(Visibility(None)))
    cursor = None
    elapsed = 0.0
    for _ in range(200):
        started = time.perf_counter()
        query = JobListQuery.of(
            query.filters, PageRequest(1, 20), query.sort_by, query.direction, cursor
        )
        _, _, cursor = await reader.list_jobs(query)
        elapsed = (time.perf_counter() - started) * 1000
    return query.page.page_number, elapsed


async def main() -> None:
    name = KEEP or f"bench_reads_{os.getpid()}"
    print(f"loading {JOBS:,} jobs over {DAYS:g} days into {name} ...", flush=True)
    loaded = await prepare(name)
    engine = create_engine(scratch_db.url_of(name))
    try:
        reader = JobReader(engine)
        now = datetime.now(UTC)
        print(f"\nstore ({f'loaded in {loaded:.0f} s' if loaded else 'reused'}):")
        for table, count in (await sizes(name)).items():
            print(f"  {table:24s} {count}")
        print(f"\n{'read':38s} {'median':>9s} {'p95':>9s}")
        for label, read in reads(reader, now).items():
            median, p95 = await timed(read)
            print(f"{label:38s} {median:7.1f} ms {p95:7.1f} ms")
        page, last = await deep_page(reader)
        print(f"{f'jobs, page {page} by nextCursor (A)':38s} {last:7.1f} ms (one call)")
    finally:
        await engine.dispose()
        if not KEEP:
            await scratch_db.drop(name)


if __name__ == "__main__":
    asyncio.run(main())
