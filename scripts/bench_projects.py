"""Ten projects share the workers: ``make bench-projects`` (part of ``make bench``;
N=2000 WORKERS=2 by default; issue 33, point 8; docs/flow-control.md).

A fresh stack (as ``make bench`` starts it). The admin makes an organization with ten
projects, each with a queue of its own (``q0``..``q9``); the even ones are limited to
``LIMIT`` (2) jobs in flight. Every project then submits a batch of N/10 ``simulate`` jobs of
``JOB_SECONDS`` (0.05 s) at once into its queue. Printed: the throughput of the whole, and per
project its jobs' span, rate, share of the workers' busy time and the most of its jobs that
ran at once (from each job's start and finish in PostgreSQL, a sweep over the intervals: the
limited ones must never exceed the limit). Like every bench, outcomes are checked: every job
must succeed on its first attempt, and no limit may be exceeded, else it exits non-zero.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import asyncpg
import httpx
from bench_pipeline import plain, start_fresh_stack, wait_terminal

PROJECTS = 10
LIMIT = 2


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The most intervals open at one instant (a start at an end's instant does not overlap)."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


async def setup(client: httpx.AsyncClient) -> list[tuple[str, str, int | None]]:
    """The projects (id, queue, limit), made as the admin."""
    org = (await client.post("/api/organizations", json={"name": "Bench Teams"})).json()
    made = []
    for i in range(PROJECTS):
        answer = await client.post("/api/projects", json={"orgId": org["id"], "name": f"team-{i}"})
        answer.raise_for_status()
        project = answer.json()["id"]
        limit = LIMIT if i % 2 == 0 else None
        queue = await client.post(
            "/api/queues",
            params={"projectId": project},
            json={"name": f"q{i}", "maxConcurrency": limit},
        )
        queue.raise_for_status()
        made.append((project, f"q{i}", limit))
    return made


async def submit(
    client: httpx.AsyncClient, project: str, queue: str, n: int, seconds: float
) -> list[str]:
    payload = {
        "immediateFailureRate": 0,
        "failureRate": 0,
        "minSeconds": seconds,
        "maxSeconds": seconds,
    }
    jobs = [{"type": "simulate", "priority": 2, "payload": payload, "queue": queue}] * n
    answer = await client.post("/api/batches", json={"jobs": jobs}, headers={"X-Project": project})
    answer.raise_for_status()
    return [str(job_id) for job_id in answer.json()["jobIds"]]


async def run(n: int, workers: int, seconds: float) -> bool:
    fresh = await start_fresh_stack(workers)
    try:
        await asyncio.to_thread(fresh.stack.wait_ready, 90.0)
        gateway = fresh.stack.services["gateway"].url
        async with httpx.AsyncClient(base_url=gateway, timeout=120) as client:
            login = await client.post(
                "/auth/login", json={"email": "admin@test.com", "password": "admin123"}
            )
            client.headers["Authorization"] = f"Bearer {login.json()['token']}"
            projects = await setup(client)
            await asyncio.sleep(1.5)  # every relay has read which queues are limited
            each = n // PROJECTS
            t0 = time.perf_counter()
            batches = await asyncio.gather(
                *(submit(client, p, q, each, seconds) for p, q, _ in projects)
            )
            ids = [job_id for batch in batches for job_id in batch]
            outcomes = await wait_terminal(fresh.database_url, ids)
            elapsed = time.perf_counter() - t0
        return await report(fresh.database_url, projects, batches, outcomes, elapsed, workers)
    finally:
        await fresh.close()


async def report(
    database_url: str,
    projects: list[tuple[str, str, int | None]],
    batches: list[list[str]],
    outcomes: Any,
    elapsed: float,
    workers: int,
) -> bool:
    connection = await asyncpg.connect(plain(database_url))
    try:
        rows = await connection.fetch(
            "SELECT project_id::text AS project, extract(epoch FROM started_at) AS s, "
            "extract(epoch FROM finished_at) AS f FROM jobs WHERE id = ANY($1::uuid[])",
            [job_id for batch in batches for job_id in batch],
        )
    finally:
        await connection.close()
    by_project: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        if row["s"] is not None and row["f"] is not None:
            by_project.setdefault(row["project"], []).append((float(row["s"]), float(row["f"])))
    busy = sum(f - s for spans in by_project.values() for s, f in spans)
    total = sum(len(batch) for batch in batches)
    print(
        f"{PROJECTS} projects x {total // PROJECTS} jobs of the queue of each ({workers} workers; "
        f"even ones limited to {LIMIT} in flight): {total} jobs in {elapsed:.2f} s -> "
        f"{total / elapsed:.0f} jobs/s end to end"
    )
    print(
        f"  outcomes: {outcomes.succeeded} succeeded, {outcomes.not_succeeded} not, "
        f"{outcomes.retried} needed more than one attempt, {outcomes.lost_attempts} lost leases, "
        f"{outcomes.dead} dead"
    )
    print("  project  limit  span s  jobs/s  busy share  most at once")
    exceeded = False
    for i, (project, _, limit) in enumerate(projects):
        spans = by_project.get(project, [])
        first = min((s for s, _ in spans), default=0.0)
        last = max((f for _, f in spans), default=0.0)
        most = most_at_once(spans)
        exceeded |= limit is not None and most > limit
        share = sum(f - s for s, f in spans) / busy if busy else 0.0
        span = last - first
        print(
            f"  team-{i:<3} {limit if limit is not None else '-':>5}  {span:6.2f}  "
            f"{len(spans) / span if span else 0:6.0f}  {share:9.1%}  {most:>11}"
        )
    clean = outcomes.clean and not exceeded
    if exceeded:
        print("  A LIMIT WAS EXCEEDED", flush=True)
    return bool(clean)


def main() -> None:
    n = int(os.environ.get("N", "2000"))
    workers = int(os.environ.get("WORKERS", "2"))
    seconds = float(os.environ.get("JOB_SECONDS", "0.05"))
    if not asyncio.run(run(n, workers, seconds)):
        sys.exit(1)


if __name__ == "__main__":
    main()
