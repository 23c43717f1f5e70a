"""``.venv/bin/python scripts/bench_charts.py``: the console's chart reads
(``GET /api/jobs/analytics/charts``) on full chart rollups and a large job store, timed at the
store (docs/dashboard.md, "Charts").

Creates a throwaway database on the local PostgreSQL (``BENCH_DATABASE_URL``, an admin URL of
the server; default ``postgresql://postgres@127.0.0.1:5432/postgres``), migrates it, and fills:

- ``JOBS`` (1,000,000) finished jobs over the last five days in ``PROJECTS`` (100) projects,
  a thousand of them finished in the last minutes (the finishes a read counts from ``jobs``);
- a full day of minute rows and eight days of hour rows for ``QUEUES`` (5) queues per project
  at every priority (``queue_minutes``: 100 x 5 x 3 x 1,440 = 2,160,000 rows), as busy queues
  would leave them, with the projects' and the platform's totals the scheduler writes beside.

Then times ``ChartStore.windows`` for each range, for the platform admin (every project), a
member of one project and one queue: the median of five calls and the p95 of twenty, after one
call not counted. The target: every read under 50 ms. Prints a table; drops the database.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
import uuid

import asyncpg
import scratch_db

from jobs_common.db import async_url, create_engine
from jobs_dashboard.adapters.charts import ChartScope, ChartStore
from jobs_dashboard.domain.charts import PLANS, ChartRange
from jobs_dashboard.domain.query import Visibility
from jobs_scheduler.migrate import upgrade_async

SERVER = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
JOBS = int(os.environ.get("JOBS", "1000000"))
PROJECTS = int(os.environ.get("PROJECTS", "100"))
QUEUES = int(os.environ.get("QUEUES", "5"))
TARGET_MS = 50.0

FILL = """
INSERT INTO jobs (id, type, priority, payload, submitted_by, project_id, status, attempt,
                  max_attempts, attempt_limit, timeout_seconds, queue, created_at, updated_at,
                  started_at, finished_at)
SELECT gen_random_uuid(), 'echo', 1 + n % 3, '{}', 'bench@test.com',
       ('00000000-0000-0000-0000-' || lpad((1 + n % $2)::text, 12, '0'))::uuid,
       CASE WHEN n % 10 = 0 THEN 'dead' ELSE 'succeeded' END, 1, 3, 3, 60, 'q' || (n % $3),
       t, t, t, t + interval '1 second'
FROM generate_series(1, $1) AS n,
     LATERAL (SELECT CASE WHEN n <= 1000 THEN now() - (n || ' seconds')::interval
                          ELSE now() - ((n % 432000) || ' seconds')::interval END AS t) AS at
"""
MINUTES = """
INSERT INTO queue_sample_minutes (minute, workers, busy_slots, slots)
SELECT m, 4, 100, 140 FROM generate_series(date_trunc('minute', now()) - interval '1439 minutes',
                                           date_trunc('minute', now()), interval '1 minute') AS m;
INSERT INTO queue_minutes (minute, project_id, queue, priority, waiting, running,
                           oldest_wait_seconds, succeeded, dead, cancelled)
SELECT m, ('00000000-0000-0000-0000-' || lpad(p::text, 12, '0'))::uuid, 'q' || q, pr,
       10, 3, 12.5, 40, 2, 1
FROM generate_series(date_trunc('minute', now()) - interval '1439 minutes',
                     date_trunc('minute', now()), interval '1 minute') AS m,
     generate_series(1, {projects}) AS p, generate_series(0, {queues} - 1) AS q,
     generate_series(1, 3) AS pr;
INSERT INTO queue_sample_hours (hour, minutes, worker_minutes, workers, busy_slots, slots)
SELECT h, 60, 60, 240, 6000, 8400
FROM generate_series(date_trunc('hour', now()) - interval '8 days',
                     date_trunc('hour', now()) - interval '1 hour', interval '1 hour') AS h;
INSERT INTO queue_hours (hour, project_id, queue, priority, waiting, running,
                         oldest_wait_seconds, succeeded, dead, cancelled)
SELECT h, ('00000000-0000-0000-0000-' || lpad(p::text, 12, '0'))::uuid, 'q' || q, pr,
       600, 180, 30, 2400, 120, 60
FROM generate_series(date_trunc('hour', now()) - interval '8 days',
                     date_trunc('hour', now()) - interval '1 hour', interval '1 hour') AS h,
     generate_series(1, {projects}) AS p, generate_series(0, {queues} - 1) AS q,
     generate_series(1, 3) AS pr;
INSERT INTO queue_minutes
SELECT minute, project_id, '*', priority, sum(waiting), sum(running), max(oldest_wait_seconds),
       sum(succeeded), sum(dead), sum(cancelled)
FROM queue_minutes GROUP BY minute, project_id, priority;
INSERT INTO queue_minutes
SELECT minute, '00000000-0000-0000-0000-000000000000', '*', priority, sum(waiting),
       sum(running), max(oldest_wait_seconds), sum(succeeded), sum(dead), sum(cancelled)
FROM queue_minutes WHERE queue = '*' GROUP BY minute, priority;
INSERT INTO queue_hours
SELECT hour, project_id, '*', priority, sum(waiting), sum(running), max(oldest_wait_seconds),
       sum(succeeded), sum(dead), sum(cancelled)
FROM queue_hours GROUP BY hour, project_id, priority;
INSERT INTO queue_hours
SELECT hour, '00000000-0000-0000-0000-000000000000', '*', priority, sum(waiting),
       sum(running), max(oldest_wait_seconds), sum(succeeded), sum(dead), sum(cancelled)
FROM queue_hours WHERE queue = '*' GROUP BY hour, priority;
ANALYZE;
"""


def project(n: int) -> uuid.UUID:
    return uuid.UUID(f"00000000-0000-0000-0000-{n:012d}")


async def fill(url: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        started = time.monotonic()
        await connection.execute(FILL, JOBS, PROJECTS, QUEUES)
        print(f"jobs: {JOBS:,} in {time.monotonic() - started:.0f} s", flush=True)
        started = time.monotonic()
        await connection.execute(MINUTES.format(projects=PROJECTS, queues=QUEUES))
        print(f"chart rollups in {time.monotonic() - started:.0f} s", flush=True)
    finally:
        await connection.close()


async def measure(url: str) -> bool:
    engine = create_engine(async_url(url), pool_size=2)
    store = ChartStore(engine)
    scopes = {
        "admin": ChartScope(Visibility()),
        "one project": ChartScope(Visibility(projects=frozenset({project(7)}))),
        "one queue": ChartScope(Visibility(projects=frozenset({project(7)})), (project(7), "q1")),
    }
    ok = True
    print(f"{'range':>6} {'caller':>12} {'median ms':>10} {'p95 ms':>8}")
    try:
        for chart_range in ChartRange:
            for name, scope in scopes.items():
                plan = PLANS[chart_range]
                await store.windows(plan, scope)
                times = []
                for _ in range(20):
                    started = time.perf_counter()
                    await store.windows(plan, scope)
                    times.append((time.perf_counter() - started) * 1000)
                median = statistics.median(times[:5])
                p95 = sorted(times)[18]
                ok = ok and p95 < TARGET_MS
                print(f"{chart_range.value:>6} {name:>12} {median:>10.1f} {p95:>8.1f}", flush=True)
    finally:
        await engine.dispose()
    return ok


async def run() -> bool:
    name = f"bench_charts_{uuid.uuid4().hex[:8]}"
    await scratch_db.create(name, admin_url=SERVER)
    url = scratch_db.url_of(name, SERVER)
    try:
        await upgrade_async(async_url(url))
        await fill(url)
        return await measure(url)
    finally:
        await scratch_db.drop(name, SERVER)


def main() -> None:
    ok = asyncio.run(run())
    print(f"target: every read's p95 under {TARGET_MS:.0f} ms: {'met' if ok else 'NOT met'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
