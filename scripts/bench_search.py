"""The jobs list's search at a million jobs, at the adapter (no HTTP): ``make bench-search``
(JOBS=1000000; DATABASE=name keeps and reuses the store).

Migrates a scratch database with the scheduler's migrations, drops the payload search index
(``ix_jobs_payload``, migration 0026), loads JOBS finished jobs with one set-based
INSERT per 250,000 (rollup triggers off, recounted once after), builds the index again (timed:
what the migration costs on a store that size) and analyzes. Each job's payload has a unique
``orderId``, one of 10,000 customers in ``to`` (about JOBS / 10,000 jobs each), a ``format``
shared by half the jobs and a nested ``lines`` array (indexed too, so the write cost counts it).

Then times the search through the dashboard's own ``JobReader.list_jobs`` (the page and its
total, as the console asks): an 8-character id prefix and payload fields, for the admin (A)
and a member of one project (P), median and p95 of CALLS calls. Last, the index's cost on the
write path: WRITES jobs inserted 100 a transaction (as the scheduler records a batch) with the
index and without it, ROUNDS (3) times each, alternating. Nothing here asserts on speed;
docs/performance.md quotes the figures.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import scratch_db

from jobs_common.db import create_engine
from jobs_common.tenancy import personal_project_id
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.domain.query import JobFilters, JobListQuery, Visibility
from jobs_dashboard.domain.search import parse_search
from jobs_scheduler.migrate import upgrade_async

JOBS = int(os.environ.get("JOBS", "1000000"))
CALLS = int(os.environ.get("CALLS", "20"))
WRITES = int(os.environ.get("WRITES", "20000"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
KEEP = os.environ.get("DATABASE")  # a name: kept after the run, and reused when it exists
CHUNK = 250_000
OWNERS = 10
CUSTOMERS = 10_000
MEMBER = "user3@test.com"

INDEX = "CREATE INDEX IF NOT EXISTS ix_jobs_payload ON jobs USING gin (payload jsonb_path_ops)"
PAYLOAD = f"""jsonb_build_object(
    'to', 'customer' || (i % {CUSTOMERS}) || '@example.com', 'orderId', i,
    'format', CASE WHEN i % 2 = 0 THEN 'csv' ELSE 'pdf' END, 'urgent', i % 50 = 0,
    'lines', jsonb_build_array(jsonb_build_object('sku', 'A' || (i % 97), 'qty', 1 + i % 5)))
"""
LOAD = f"""
INSERT INTO jobs (id, type, priority, payload, submitted_by, project_id, status,
  max_attempts, attempt_limit, timeout_seconds, created_at, updated_at, started_at,
  finished_at)
SELECT gen_random_uuid(), (ARRAY['email', 'report_generation'])[1 + i % 2], 1 + i % 3,
  {PAYLOAD}, 'user' || (i % {OWNERS}) || '@test.com',
  jobs_personal_project('user' || (i % {OWNERS}) || '@test.com'),
  CASE WHEN i % 20 = 0 THEN 'dead' ELSE 'succeeded' END, 3, 3, 30, at, at, at,
  at + interval '80 milliseconds'
FROM generate_series($1::bigint, $2::bigint) i,
  LATERAL (SELECT now() - make_interval(secs => i * 0.5) AS at) t
"""
WRITE = f"""
INSERT INTO jobs (id, type, priority, payload, submitted_by, status, max_attempts,
  attempt_limit, timeout_seconds)
SELECT gen_random_uuid(), 'email', 2, {PAYLOAD}, 'writer@test.com', 'queued', 3, 3, 30
FROM generate_series($1::bigint, $2::bigint) i
"""


async def prepare(name: str) -> dict[str, float]:
    """Create, migrate and load the store unless it exists; the seconds of each step."""
    if not await scratch_db.create(name, reuse=True):
        return {}
    took: dict[str, float] = {}
    await upgrade_async(
        scratch_db.url_of(name).replace("postgresql://", "postgresql+asyncpg://", 1)
    )
    store = await asyncpg.connect(scratch_db.url_of(name))
    try:
        started = time.perf_counter()
        await store.execute("DROP INDEX ix_jobs_payload")
        await store.execute("ALTER TABLE jobs DISABLE TRIGGER USER")
        for first in range(1, JOBS + 1, CHUNK):
            await store.execute(LOAD, first, min(JOBS, first + CHUNK - 1))
            print(f"  loaded {min(JOBS, first + CHUNK - 1):,} jobs", flush=True)
        await store.execute("ALTER TABLE jobs ENABLE TRIGGER USER")
        await store.execute("SELECT job_rollups_rebuild()")
        took["load"] = time.perf_counter() - started
        started = time.perf_counter()
        await store.execute(INDEX)
        took["index build"] = time.perf_counter() - started
        await store.execute("VACUUM ANALYZE")
    finally:
        await store.close()
    return took


async def sample_id(name: str) -> str:
    store = await asyncpg.connect(scratch_db.url_of(name))
    try:
        found: uuid.UUID = await store.fetchval(
            "SELECT id FROM jobs WHERE submitted_by = $1 ORDER BY created_at DESC "
            "OFFSET $2 LIMIT 1",
            MEMBER,
            JOBS // OWNERS // 2,
        )
        return str(found)
    finally:
        await store.close()


def searches(reader: JobReader, job_id: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    everyone = Visibility(None)
    member = Visibility(None, frozenset({personal_project_id(MEMBER)}))
    order = JOBS // 2 + 3  # i % 10 == 3: a job of user3's
    customer = "customer1233@example.com"  # i % 10 == 3: user3's

    def search(visibility: Visibility, text: str, **filters: Any) -> Callable[[], Awaitable[Any]]:
        query = JobListQuery(JobFilters(visibility, search=parse_search(text), **filters))
        return lambda: reader.list_jobs(query)

    return {
        "id prefix, 8 characters (A)": search(everyone, job_id[:8]),
        "id prefix, 8 characters (P)": search(member, job_id[:8]),
        "payload.orderId = n, 1 job (A)": search(everyone, f"payload.orderId = {order}"),
        "payload.orderId = n, 1 job (P)": search(member, f"payload.orderId = {order}"),
        f"payload.to = c, {JOBS // CUSTOMERS} jobs (A)": search(
            everyone, f"payload.to = {customer}"
        ),
        f"payload.to = c, {JOBS // CUSTOMERS} jobs (P)": search(member, f"payload.to = {customer}"),
        "payload.to = c, and a type (A)": search(
            everyone, f"payload.to = {customer}", type="report_generation"
        ),
        f"payload.format = csv, {JOBS // 2:,} jobs (A)": search(everyone, "payload.format = csv"),
    }


async def timed(read: Callable[[], Awaitable[Any]]) -> tuple[float, float, int]:
    _, total, _ = await read()  # warm
    samples = []
    for _ in range(CALLS):
        started = time.perf_counter()
        await read()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, int(0.95 * len(samples)) - 1)], total


async def write_cost(name: str) -> dict[str, list[float]]:
    """Milliseconds per 1,000 jobs inserted 100 a transaction, with the index and without it,
    in alternating rounds (the spread shows the machine's noise)."""
    store = await asyncpg.connect(scratch_db.url_of(name))
    costs: dict[str, list[float]] = {"with the index": [], "without it": []}
    try:
        for label in [*costs] * ROUNDS:
            if label == "without it":
                await store.execute("DROP INDEX ix_jobs_payload")
            started = time.perf_counter()
            for first in range(JOBS + 1, JOBS + WRITES + 1, 100):
                await store.execute(WRITE, first, first + 99)
            costs[label].append((time.perf_counter() - started) * 1000 / (WRITES / 1000))
            await store.execute("DELETE FROM jobs WHERE submitted_by = 'writer@test.com'")
            await store.execute("VACUUM jobs")
            if label == "without it":
                await store.execute(INDEX)
    finally:
        await store.close()
    return costs


async def main() -> None:
    name = KEEP or f"bench_search_{os.getpid()}"
    print(f"loading {JOBS:,} jobs into {name} ...", flush=True)
    engine = create_engine(scratch_db.url_of(name))
    try:
        took = await prepare(name)
        steps = ", ".join(f"{step} {seconds:.0f} s" for step, seconds in took.items())
        print(f"store: {steps or 'reused'}; payload index", end=" ", flush=True)
        store = await asyncpg.connect(scratch_db.url_of(name))
        try:
            size = "SELECT pg_size_pretty(pg_relation_size('ix_jobs_payload'))"
            print(await store.fetchval(size))
        finally:
            await store.close()
        reader = JobReader(engine)
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"load average (1, 5, 15 min) before the reads: {load} on {os.cpu_count()} CPUs")
        print(
            f"\n{'search (page of 20 and its total)':40s} {'median':>9s} {'p95':>9s} {'found':>9s}"
        )
        for label, read in searches(reader, await sample_id(name)).items():
            median, p95, total = await timed(read)
            print(f"{label:40s} {median:6.1f} ms {p95:6.1f} ms {total:9,}")
        print(f"\nwrite path: {WRITES:,} jobs inserted 100 a transaction, per 1,000 jobs")
        for label, rounds in (await write_cost(name)).items():
            each = ", ".join(f"{ms:.1f}" for ms in rounds)
            print(f"  {label:16s} median {statistics.median(rounds):7.1f} ms (rounds: {each})")
    finally:
        await engine.dispose()
        if not KEEP:
            await scratch_db.drop(name)


if __name__ == "__main__":
    asyncio.run(main())
