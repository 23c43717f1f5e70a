"""``make bench-history``: the console's reads through the gateway, on empty stores and with
history.

Starts a fresh stack as ``make bench`` does (``bench_pipeline.start_fresh_stack``: every
service a real process, at its default log level), measures each read of the table below as
the demo user and as the admin on the empty stores, loads the history into the same stores
(``bench_pipeline.load_history``: HISTORY_JOBS, 1,000,000, finished jobs of the last five days,
a tenth of them the user's, and HISTORY_SUBMISSIONS, 200,000, published submissions, then a
retention pass over them), measures again, and prints per read and caller the median of
three calls and the p95 of twenty (one call at a time, over a keep-alive connection, after one
call not counted). The target: every console read at p95 under 50 ms. Exits non-zero when a
read does not answer 200.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass, field

import asyncpg
import httpx
from bench_loadgen import KeepAliveClient
from bench_pipeline import HistorySize, load_history, plain, start_fresh_stack

READS = (
    "/api/jobs?pageSize=20",
    "/api/jobs?type=email&sortDirection=asc",
    "/api/jobs/analytics",
    "/api/jobs/analytics/series",
    "/api/queues",
    "/api/dead-letters",
)
CALLERS = {"user": ("user@test.com", "user123"), "admin": ("admin@test.com", "admin123")}
MEDIAN_OF = 3
P95_OF = 20
TARGET_P95_MS = 50.0


@dataclass
class Timings:
    """Milliseconds per (read, caller): the median of three calls, the p95 of twenty."""

    median: dict[tuple[str, str], float] = field(default_factory=dict)
    p95: dict[tuple[str, str], float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def login(gateway: str, email: str, password: str) -> str:
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        answer = await client.post("/auth/login", json={"email": email, "password": password})
        answer.raise_for_status()
        return str(answer.json()["token"])


async def timed(client: KeepAliveClient, path: str, calls: int, failures: list[str]) -> list[float]:
    """``calls`` GETs of ``path`` one after the other: each one's milliseconds."""
    took: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        status, body = await client.get(path)
        took.append((time.perf_counter() - started) * 1000)
        if status != 200:
            failures.append(f"GET {path} answered {status}: {body[:200]!r}")
    return took


async def measure_reads(gateway: str) -> Timings:
    timings = Timings()
    for caller, (email, password) in CALLERS.items():
        client = KeepAliveClient(gateway, timeout=60)
        client.authorize(await login(gateway, email, password))
        try:
            for path in READS:
                await timed(client, path, 1, timings.failures)  # a connection, plans cached
                three = await timed(client, path, MEDIAN_OF, timings.failures)
                twenty = await timed(client, path, P95_OF, timings.failures)
                timings.median[(path, caller)] = statistics.median(three)
                timings.p95[(path, caller)] = p95(twenty)
        finally:
            client.close()
    return timings


async def store_held(database_url: str) -> str:
    connection = await asyncpg.connect(plain(database_url))
    try:
        jobs = await connection.fetchval("SELECT count(*) FROM jobs")
        users = await connection.fetchval(
            "SELECT count(*) FROM jobs WHERE submitted_by = 'user@test.com'"
        )
        letters = await connection.fetchval(
            "SELECT count(*) FROM dead_letters WHERE resolved_at IS NULL"
        )
    finally:
        await connection.close()
    return f"{jobs:,} jobs ({users:,} the user's), {letters:,} open dead letters"


def table(empty: Timings, full: Timings, held: str) -> str:
    """One row per read and caller: median and p95, empty stores then with history."""

    def cell(timings: Timings, key: tuple[str, str]) -> str:
        mark = " !" if timings.p95[key] > TARGET_P95_MS else ""
        return f"{timings.median[key]:7.1f} {timings.p95[key]:7.1f}{mark:2}"

    width = max(len(path) for path in READS) + 4
    lines = [
        f"\nreads through the gateway, ms (median of {MEDIAN_OF}, p95 of {P95_OF}; "
        f"! = p95 over {TARGET_P95_MS:.0f} ms); with history: {held}",
        f"  {'GET':{width}} {'caller':6}  {'empty stores':>17}  {'with history':>17}",
        f"  {'':{width}} {'':6}  {'median':>7} {'p95':>7}    {'median':>7} {'p95':>7}",
    ]
    for path in READS:
        for caller in CALLERS:
            key = (path, caller)
            lines.append(f"  {path:{width}} {caller:6}  {cell(empty, key)}  {cell(full, key)}")
    return "\n".join(lines)


async def run(workers: int, size: HistorySize, log_level: str | None) -> bool:
    fresh = await start_fresh_stack(workers, log_level)
    try:
        await asyncio.to_thread(fresh.stack.wait_ready, 90.0)
        gateway = fresh.stack.services["gateway"].url
        empty = await measure_reads(gateway)
        print(f"empty stores: measured {len(READS)} reads x {len(CALLERS)} callers", flush=True)
        await load_history(fresh, size)
        full = await measure_reads(gateway)
        print(table(empty, full, await store_held(fresh.database_url)), flush=True)
    finally:
        await fresh.close()
    failures = empty.failures + full.failures
    for failure in failures:
        print(f"FAILED: {failure}")
    return not failures


def main() -> None:
    workers = int(os.environ.get("WORKERS", "2"))
    size = HistorySize.from_environment() or HistorySize()
    ok = asyncio.run(run(workers, size, os.environ.get("LOG_LEVEL") or None))
    sys.stdout.flush()
    if not ok:
        print("\nbench-history FAILED: a read did not answer 200")
        sys.exit(1)


if __name__ == "__main__":
    main()
