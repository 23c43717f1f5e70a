"""Overload benchmark: ``make bench-overload`` (DURATION=120 FACTOR=2.0 WORKERS=2 by default).

On a fresh stack (bench_pipeline's: every service a real process on a new database, vhost and
Mongo database) it first measures capacity end to end: C clients keep the load's mix of single
requests and batches in flight for CALIBRATION seconds, and the jobs reaching a terminal state
per second over the last two thirds are the capacity (CAPACITY=jobs/s skips this). Then it
offers FACTOR x capacity for DURATION seconds as an open loop: each request fires at its
scheduled time whatever the earlier answers, with at most MAX_IN_FLIGHT outstanding (a request
due while the bound is reached is not sent, and counted). Every second it samples each
process's RSS and CPU (/proc), the vhost's queue depths (management API) and the jobs recorded
and not yet terminal (PostgreSQL). After the load it waits, at most DRAIN_TIMEOUT seconds,
until every accepted job is terminal, and prints the figures.

A refused request (429, 503, timeout) is counted apart: it is not a lost job. Every accepted
(202) job must succeed exactly once (first attempt, no lost lease), the workers must not have
run a handler more often than PostgreSQL counts attempts (their own counters), and the backlog
must drain (every job terminal, every queue empty), else the script exits 1. Memory is judged,
not enforced: per process, the mean RSS of the last third of the load against the middle third.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass

import asyncpg
import uvloop
from bench_loadgen import KeepAliveClient, Traffic, offer, plan
from bench_monitor import (
    STAND_IN,
    TERMINAL,
    Monitor,
    backlog_lines,
    memory_table,
    process_counters,
    stand_in_pid,
)
from bench_pipeline import (
    Outcomes,
    percentile,
    plain,
    process_cpu_seconds,
    start_fresh_stack,
    wait_terminal,
)

from jobs_testing.stack import Stack

LOGIN = json.dumps({"email": "admin@test.com", "password": "admin123"}).encode()


def env_number(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


@dataclass(frozen=True)
class Knobs:
    workers: int
    calibration_s: float  # CALIBRATION: seconds of closed-loop load measuring capacity
    concurrency: int  # C: requests in flight while calibrating
    duration_s: float
    capacity: float | None  # jobs/s; measured when None
    factor: float
    max_in_flight: int
    batch_size: int
    batch_share: float  # share of the offered jobs that arrive in batches
    drain_timeout_s: float
    request_timeout_s: float

    @classmethod
    def from_env(cls) -> Knobs:
        capacity = env_number("CAPACITY", 0.0)
        return cls(
            workers=int(env_number("WORKERS", 2)),
            calibration_s=env_number("CALIBRATION", 30.0),
            concurrency=int(env_number("C", 128)),
            duration_s=env_number("DURATION", 120.0),
            capacity=capacity or None,
            factor=env_number("FACTOR", 2.0),
            max_in_flight=int(env_number("MAX_IN_FLIGHT", 512)),
            batch_size=int(env_number("BATCH_SIZE", 50)),
            batch_share=env_number("BATCH_SHARE", 0.5),
            drain_timeout_s=env_number("DRAIN_TIMEOUT", 600.0),
            request_timeout_s=env_number("REQUEST_TIMEOUT", 60.0),
        )


async def terminal_count(connection: asyncpg.Connection) -> int:
    count: int = await connection.fetchval(
        "SELECT count(*) FROM jobs WHERE status = ANY($1::text[])", TERMINAL
    )
    return count


async def drain(connection: asyncpg.Connection, job_ids: list[str], timeout: float) -> bool:
    """Wait until every job is recorded and terminal and no other job is open."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        recorded, open_jobs = await connection.fetchrow(
            "SELECT count(*), count(*) FILTER (WHERE status <> ALL($1::text[])) FROM jobs",
            TERMINAL,
        )
        if open_jobs == 0 and recorded >= len(job_ids):
            done = await connection.fetchval(
                "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND status = ANY($2)",
                job_ids,
                TERMINAL,
            )
            if done == len(job_ids):
                return True
        await asyncio.sleep(0.25)
    return False


async def evidence(connection: asyncpg.Connection, job_ids: list[str]) -> list[str]:
    """What PostgreSQL says about accepted jobs that did not succeed exactly once."""
    missing = await connection.fetchval(
        "SELECT $2::int - count(*) FROM jobs WHERE id = ANY($1::uuid[])", job_ids, len(job_ids)
    )
    by_status = await connection.fetch(
        "SELECT status, count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY status",
        job_ids,
    )
    rows = await connection.fetch(
        "SELECT j.id, j.status, j.attempt, (SELECT string_agg(a.attempt || ':' || a.status, ', ' "
        "ORDER BY a.attempt) FROM job_attempts a WHERE a.job_id = j.id) AS attempts "
        "FROM jobs j WHERE j.id = ANY($1::uuid[]) AND (j.status <> 'succeeded' OR j.attempt > 1 "
        "OR EXISTS (SELECT 1 FROM job_attempts a WHERE a.job_id = j.id AND a.status = 'lost')) "
        "LIMIT 10",
        job_ids,
    )
    lines = [
        f"  accepted but not in PostgreSQL: {missing}",
        "  by status: " + ", ".join(f"{r['status']} {r['n']}" for r in by_status),
    ]
    lines += [
        f"  job {r['id']}: {r['status']}, attempt {r['attempt']} ({r['attempts']})" for r in rows
    ]
    return lines


async def side_effects(connection: asyncpg.Connection) -> str:
    """Rows that would show trouble even when every job succeeded."""
    twice = await connection.fetchval(
        "SELECT count(*) FROM (SELECT job_id FROM job_events WHERE to_status = 'running' "
        "GROUP BY job_id HAVING count(*) > 1) AS x"
    )
    poison = await connection.fetchval("SELECT count(*) FROM poison_messages")
    dead = await connection.fetchval("SELECT count(*) FROM dead_letters")
    return f"jobs started more than once {twice}, poison messages {poison}, dead letters {dead}"


def outcome_line(o: Outcomes) -> str:
    return (
        f"{o.succeeded:,} succeeded, {o.not_succeeded} not, {o.retried} needed more than one "
        f"attempt, {o.lost_attempts} lost leases, {o.dead} dead"
        + ("" if o.clean else "   <-- FAILED: every accepted job must succeed exactly once")
    )


async def calibrate(
    client: KeepAliveClient, knobs: Knobs, connection: asyncpg.Connection, monitor: Monitor
) -> tuple[float, list[str]]:
    """Jobs/s reaching a terminal state while C clients keep the load's mix in flight, over
    the last two thirds of CALIBRATION (the first third warms up); the accepted ids."""
    traffic = monitor.begin("calibration")
    mix = itertools.cycle(
        [request for _, request in plan(1000, 1.0, knobs.batch_share, knobs.batch_size)]
    )
    deadline = time.perf_counter() + knobs.calibration_s

    async def client_loop() -> None:
        while time.perf_counter() < deadline:
            await traffic.send(client, next(mix))

    clients = [asyncio.create_task(client_loop()) for _ in range(knobs.concurrency)]
    await asyncio.sleep(knobs.calibration_s / 3)
    warm, warm_at = await terminal_count(connection), time.perf_counter()
    await asyncio.sleep(max(deadline - time.perf_counter(), 0.0))
    done, done_at = await terminal_count(connection), time.perf_counter()
    await asyncio.gather(*clients)
    capacity = (done - warm) / (done_at - warm_at)
    monitor.begin("settle")
    t0 = time.perf_counter()
    if not await drain(connection, traffic.accepted, knobs.drain_timeout_s):
        raise RuntimeError("calibration: the jobs did not drain")
    print(
        f"calibration: {knobs.concurrency} clients for {knobs.calibration_s:.0f} s, "
        f"{len(traffic.accepted):,} jobs accepted ({traffic.sent_requests:,} requests, "
        f"{sum(traffic.refused.values())} refused); {done - warm:,} jobs terminal in the last "
        f"{done_at - warm_at:.1f} s -> capacity {capacity:.0f} jobs/s end to end "
        f"(the backlog then drained in {time.perf_counter() - t0:.1f} s)",
        flush=True,
    )
    return capacity, traffic.accepted


@dataclass
class Overload:
    """The figures of one open-loop load and its drain."""

    knobs: Knobs
    capacity: float
    offered_jobs: int
    traffic: Traffic
    load_s: float
    drain_s: float
    drained: bool  # every accepted job terminal, no other job open
    emptied_s: float | None  # after the load stopped, until every queue was empty
    terminal: tuple[int, int, int]  # terminal jobs at load start, load end, drain end
    client_cpu_s: float  # this process (the load generator) during the load
    accepted_in_load: int  # jobs whose 202 came before the load stopped

    def report(self) -> list[str]:
        k, tr = self.knobs, self.traffic
        before, at_load_end, at_end = self.terminal
        refusals = ", ".join(f"{reason} x{n:,}" for reason, n in tr.refused.most_common())
        lines = [
            f"offered   {self.offered_jobs / k.duration_s:8.0f} jobs/s ({self.offered_jobs:,} "
            f"jobs); sent {tr.sent_jobs / self.load_s:.0f} jobs/s ({tr.sent_requests:,} "
            f"requests, fired late by p99 {percentile(tr.lateness, 0.99) * 1000:.0f} ms, "
            f"max {max(tr.lateness, default=0) * 1000:.0f} ms; the generator used "
            f"{self.client_cpu_s / self.load_s:.0%} of a core)",
            f"accepted  {self.accepted_in_load / self.load_s:8.0f} jobs/s while the load ran "
            f"({len(tr.accepted):,} jobs in all; the 202 came after p50 "
            f"{percentile(tr.accept_latencies, 0.5):.2f} s, "
            f"p99 {percentile(tr.accept_latencies, 0.99):.2f} s)",
            f"refused   {sum(tr.refused.values()):8,} requests ({tr.refused_jobs:,} jobs)"
            + (f": {refusals}" if refusals else ""),
            f"not sent  {tr.unsent_requests:8,} requests ({tr.unsent_jobs:,} jobs) due while "
            f"{k.max_in_flight} were in flight; peak in flight {tr.peak_in_flight}",
            f"drain     {'every accepted job terminal' if self.drained else 'NOT DRAINED'} "
            f"{self.drain_s:.1f} s after the load stopped"
            + ("" if self.drained else f" (gave up after {k.drain_timeout_s:.0f} s)"),
            f"queues    every queue empty {self.emptied_s:.1f} s after the load stopped"
            if self.emptied_s is not None
            else "queues    NOT EMPTY when the drain timeout ran out",
            "throughput end to end (jobs reaching a terminal state):",
            f"  calibration {self.capacity:6.0f} jobs/s"
            + (" (given as CAPACITY)" if k.capacity else ""),
            f"  load        {(at_load_end - before) / self.load_s:6.0f} jobs/s "
            f"({at_load_end - before:,} in {self.load_s:.0f} s)",
            f"  drain       {(at_end - at_load_end) / self.drain_s:6.0f} jobs/s "
            f"({at_end - at_load_end:,} in {self.drain_s:.0f} s)",
            f"  load+drain  {(at_end - before) / (self.load_s + self.drain_s):6.0f} jobs/s",
        ]
        lines += [f"  first {r} answer: {body[:200]!r}" for r, body in tr.refusal_bodies.items()]
        if self.accepted_in_load >= 0.95 * self.offered_jobs:
            lines.append(
                "NOTE: the stack accepted nearly all the offered load, so this was no overload: "
                "the calibration underestimated capacity (was the machine busy?); rerun, or set "
                "CAPACITY or FACTOR"
            )
        return lines


async def overload(
    client: KeepAliveClient,
    knobs: Knobs,
    capacity: float,
    connection: asyncpg.Connection,
    monitor: Monitor,
) -> Overload:
    """Offer FACTOR x capacity for DURATION, then wait for the backlog to drain."""
    rate = knobs.factor * capacity
    due = plan(rate, knobs.duration_s, knobs.batch_share, knobs.batch_size)
    print(
        f"\noverload: {knobs.factor:g} x {capacity:.0f} = {rate:.0f} jobs/s offered for "
        f"{knobs.duration_s:.0f} s ({len(due):,} requests, {knobs.batch_share:.0%} of the jobs "
        f"in batches of {knobs.batch_size}), at most {knobs.max_in_flight} requests in flight, "
        f"{knobs.workers} workers, {os.cpu_count()} cores; starts {time.strftime('%H:%M:%S')}",
        flush=True,
    )
    before = await terminal_count(connection)
    cpu0 = process_cpu_seconds(os.getpid())
    traffic, load_start = monitor.begin("load"), time.perf_counter()
    outstanding = await offer(client, traffic, due, knobs.max_in_flight)
    load_end = time.perf_counter()
    client_cpu_s = process_cpu_seconds(os.getpid()) - cpu0
    accepted_in_load = len(traffic.accepted)
    at_load_end = await terminal_count(connection)
    monitor.phase = "drain"
    await asyncio.gather(*outstanding)
    drained = await drain(connection, traffic.accepted, knobs.drain_timeout_s)
    drain_s = time.perf_counter() - load_end
    at_end = await terminal_count(connection)
    emptied = await monitor.wait_queues_empty(max(knobs.drain_timeout_s - drain_s, 0.0))
    emptied_s = time.perf_counter() - load_end if emptied else None
    return Overload(
        knobs=knobs,
        capacity=capacity,
        offered_jobs=sum(request.jobs for _, request in due),
        traffic=traffic,
        load_s=load_end - load_start,
        drain_s=drain_s,
        drained=drained,
        emptied_s=emptied_s,
        terminal=(before, at_load_end, at_end),
        client_cpu_s=client_cpu_s,
        accepted_in_load=accepted_in_load,
    )


async def verify(
    stack: Stack,
    database_url: str,
    connection: asyncpg.Connection,
    result: Overload,
    calibration: list[str],
) -> bool:
    """Print every outcome from PostgreSQL and the handler runs the workers counted; True
    when each job succeeded exactly once and no handler ran more often than attempts."""
    accepted = calibration + result.traffic.accepted
    ok = result.drained and result.emptied_s is not None
    if result.drained:
        o = await wait_terminal(database_url, result.traffic.accepted)
        print(
            f"accepted->started  p50 {percentile(o.start_delays, 0.5):.2f} s  "
            f"p99 {percentile(o.start_delays, 0.99):.2f} s; accepted->finished "
            f"p50 {percentile(o.latencies, 0.5):.2f} s  p99 {percentile(o.latencies, 0.99):.2f} s"
            f"  max {max(o.latencies, default=0):.2f} s",
            f"outcomes (the load's accepted jobs): {outcome_line(o)}",
            sep="\n",
        )
        ok = o.clean
        if calibration:
            calibrated = await wait_terminal(database_url, calibration)
            print(f"outcomes (calibration): {outcome_line(calibrated)}")
            ok = ok and calibrated.clean
        extra = await connection.fetch(
            "SELECT id::text FROM jobs WHERE NOT (id = ANY($1::uuid[]))", accepted
        )
        if extra:
            others = await wait_terminal(database_url, [r["id"] for r in extra])
            print(
                f"jobs recorded without a 202 (refused or timed-out requests): {len(extra)}; "
                f"outcomes: {outcome_line(others)}"
            )
            ok = ok and others.clean
    print(f"checks: {await side_effects(connection)}")
    counted = await process_counters(stack)
    runs = counted.pop("handler runs", 0)
    attempts = await connection.fetchval("SELECT coalesce(sum(attempt), 0) FROM jobs")
    print(
        f"  worker handler runs {runs:,} for {attempts:,} attempts"
        + (f"   <-- FAILED: {runs - attempts:,} handler runs more" if runs > attempts else "")
        + "; scheduler: "
        + ", ".join(f"{key} {n:,}" for key, n in sorted(counted.items()) if n)
    )
    if runs > attempts:
        print(
            "  (a handler that ran again for a duplicate dispatch leaves no trace in PostgreSQL: "
            "the scheduler drops its result as stale; see the scheduler log)"
        )
    ok = ok and runs <= attempts
    if not ok:
        print("evidence from PostgreSQL:", *await evidence(connection, accepted), sep="\n")
    return ok


async def run(knobs: Knobs) -> bool:
    fresh = await start_fresh_stack(knobs.workers)
    stack = fresh.stack
    try:
        await asyncio.to_thread(stack.wait_ready, 90.0)
        processes = {n: s.process.pid for n, s in stack.services.items() if s.process is not None}
        if (pid := stand_in_pid()) is not None:
            processes[STAND_IN] = pid
        monitor = Monitor(fresh, processes)
        sampler = asyncio.create_task(monitor.run())
        connection = await asyncpg.connect(plain(fresh.database_url))
        client = KeepAliveClient(stack.services["gateway"].url, timeout=knobs.request_timeout_s)
        try:
            _, login = await client.post("/auth/login", LOGIN)
            client.authorize(json.loads(login)["token"])
            calibration: list[str] = []
            capacity = knobs.capacity
            if capacity is None:
                capacity, calibration = await calibrate(client, knobs, connection, monitor)
            result = await overload(client, knobs, capacity, connection, monitor)
            await asyncio.sleep(1.0)  # one sample after the drain
            monitor.stop.set()
            await sampler
            print("", *result.report(), sep="\n", flush=True)
            ok = await verify(stack, fresh.database_url, connection, result, calibration)
            print("", *memory_table(monitor), "", *backlog_lines(monitor), sep="\n")
            print(f"service logs: {stack.log_dir}")
        finally:
            client.close()
            monitor.stop.set()
            await connection.close()
    finally:
        await fresh.close()
    return ok


def main() -> None:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        ok = runner.run(run(Knobs.from_env()))
    sys.stdout.flush()
    if not ok:
        print(
            "\nbench-overload FAILED: an accepted job did not succeed exactly once, a handler "
            "ran more often than its job's attempts, or the backlog did not drain (see above)"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
