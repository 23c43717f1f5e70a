"""Benchmark the whole pipeline on this machine: ``make bench`` (N=2000 WORKERS=2 by default).

Starts every service as a real process on a fresh PostgreSQL database, RabbitMQ vhost and
Mongo database (as the e2e tests do), submits N no-op ``simulate`` jobs through the gateway,
single requests with C in flight and then one batch, and prints figures: submission rate,
time until every job is terminal, end-to-end throughput, latency percentiles (accepted ->
started, accepted -> finished, from PostgreSQL) and CPU-seconds of our processes per 1,000
jobs. Nothing here asserts on speed, but outcomes are checked: every noop job must succeed on
its first attempt with no lost lease, else the bench exits non-zero (a rate that hides re-runs
or dead jobs is worse than no figure).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx
from bench_loadgen import NOOP, KeepAliveClient, Traffic, offer, plan

from jobs_testing.infra import (
    Resolved,
    free_port,
    resolve_mongo,
    resolve_postgres,
    resolve_rabbitmq,
)
from jobs_testing.plugin import PostgresServer, RabbitServer
from jobs_testing.stack import Stack, StackConfig


def plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its waited-for children (/proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_since(stack: Stack, before: dict[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0.0) for k, v in service_cpu_seconds(stack).items()}


def infra_cpu_since(before: dict[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0.0) for k, v in infra_cpu_seconds().items()}


def service_cpu_seconds(stack: Stack) -> dict[str, float]:
    """CPU seconds of each service process; workers summed as ``worker``."""
    cpu: dict[str, float] = {}
    for name, service in stack.services.items():
        if service.process is not None:
            key = name.split("-")[0]
            cpu[key] = cpu.get(key, 0.0) + process_cpu_seconds(service.process.pid)
    return cpu


INFRA = {"postgres": "postgresql", "beam.smp": "rabbitmq"}
CORES = os.cpu_count() or 1


def infra_cpu_seconds() -> dict[str, float]:
    """CPU seconds of the processes beside ours: PostgreSQL's, RabbitMQ's and the MongoDB
    stand-in's (every process of the machine with that name, so run nothing else)."""
    cpu: dict[str, float] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            comm = (proc / "comm").read_text().strip()
            key = INFRA.get(comm)
            if key is None and b"nx-27017" in (proc / "cmdline").read_bytes():
                key = "mongodb stand-in"
            if key is None:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks = int(fields[11]) + int(fields[12])  # utime, stime: the process itself
        cpu[key] = cpu.get(key, 0.0) + ticks / os.sysconf("SC_CLK_TCK")
    return cpu


def start_profilers(stack: Stack, directory: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy on every service process (collapsed stacks, one file each): ``PROFILE=dir``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    directory.mkdir(parents=True, exist_ok=True)
    return [
        subprocess.Popen(
            [
                spy,
                "record",
                "--pid",
                str(s.process.pid),
                "--rate",
                "50",
                "--nonblocking",
                "--format",
                "raw",
                "--output",
                str(directory / f"{name}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name, s in stack.services.items()
        if s.process is not None
    ]


def stop_profilers(profilers: list[subprocess.Popen[bytes]]) -> None:
    for profiler in profilers:
        profiler.send_signal(signal.SIGINT)
    for profiler in profilers:
        profiler.wait(timeout=30)


@dataclass
class Outcomes:
    """What happened to the jobs of one phase, from PostgreSQL (the authoritative state)."""

    succeeded: int
    not_succeeded: int
    retried: int  # jobs that needed more than one attempt
    lost_attempts: int  # attempts whose lease expired
    dead: int
    latencies: list[float]  # accepted -> finished, seconds
    start_delays: list[float]  # accepted -> first attempt started, seconds
    # accepted -> recorded and dispatched by the scheduler (its transaction's start), seconds
    record_delays: list[float]

    @property
    def clean(self) -> bool:
        return self.not_succeeded == 0 and self.retried == 0 and self.lost_attempts == 0


async def wait_terminal(database_url: str, job_ids: list[str]) -> Outcomes:
    """Wait until every job is terminal, then read what happened to each."""
    connection = await asyncpg.connect(plain(database_url))
    try:
        while True:
            done = await connection.fetchval(
                "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) "
                "AND status IN ('succeeded', 'dead', 'cancelled')",
                job_ids,
            )
            if done == len(job_ids):
                break
            await asyncio.sleep(0.05)
        row = await connection.fetchrow(
            "SELECT count(*) FILTER (WHERE status = 'succeeded') AS succeeded, "
            "count(*) FILTER (WHERE status = 'dead') AS dead, "
            "count(*) FILTER (WHERE attempt > 1) AS retried "
            "FROM jobs WHERE id = ANY($1::uuid[])",
            job_ids,
        )
        lost = await connection.fetchval(
            "SELECT count(*) FROM job_attempts WHERE job_id = ANY($1::uuid[]) AND status = 'lost'",
            job_ids,
        )
        times = await connection.fetch(
            "SELECT extract(epoch FROM j.finished_at - j.created_at) AS finished, "
            "extract(epoch FROM a.started_at - j.created_at) AS started, "
            "extract(epoch FROM a.dispatched_at - j.created_at) AS recorded "
            "FROM jobs j JOIN job_attempts a ON a.job_id = j.id AND a.attempt = 1 "
            "WHERE j.id = ANY($1::uuid[])",
            job_ids,
        )
    finally:
        await connection.close()
    return Outcomes(
        succeeded=row["succeeded"],
        not_succeeded=len(job_ids) - row["succeeded"],
        retried=row["retried"],
        lost_attempts=lost,
        dead=row["dead"],
        latencies=[float(t["finished"]) for t in times if t["finished"] is not None],
        start_delays=[float(t["started"]) for t in times if t["started"] is not None],
        record_delays=[float(t["recorded"]) for t in times if t["recorded"] is not None],
    )


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Phase:
    name: str
    n: int
    accepted_s: float
    total_s: float
    outcomes: Outcomes
    cpu_by_service: dict[str, float]  # CPU seconds per service (workers summed)
    cpu_beside: dict[str, float] = field(default_factory=dict)  # PostgreSQL, RabbitMQ, MongoDB

    @property
    def cpu_s(self) -> float:
        return sum(self.cpu_by_service.values())

    @property
    def end_to_end_per_s(self) -> float:
        return self.n / self.total_s

    @property
    def machine_busy(self) -> float:
        """Share of the machine's cores our processes and the servers beside them used: at
        half of peak it says whether the latency is the platform's or a queue for a core."""
        return (self.cpu_s + sum(self.cpu_beside.values())) / (self.total_s * CORES)

    def report(self) -> str:
        o = self.outcomes
        return "\n".join(
            [
                f"\n{self.name}: {self.n} jobs",
                f"  accepted at        {self.n / self.accepted_s:8.0f} jobs/s "
                f"({self.accepted_s:.2f} s)",
                f"  all terminal after {self.total_s:8.2f} s  -> "
                f"{self.end_to_end_per_s:.0f} jobs/s end to end",
                f"  accepted->started  p50 {percentile(o.start_delays, 0.5) * 1000:.0f} ms  "
                f"p99 {percentile(o.start_delays, 0.99) * 1000:.0f} ms  (of which accepted->"
                f"recorded p50 {percentile(o.record_delays, 0.5) * 1000:.0f} ms  "
                f"p99 {percentile(o.record_delays, 0.99) * 1000:.0f} ms)",
                f"  accepted->finished p50 {percentile(o.latencies, 0.5):.3f} s  "
                f"p95 {percentile(o.latencies, 0.95):.3f} s  "
                f"max {max(o.latencies, default=0):.3f} s",
                f"  CPU {self.cpu_s:.1f} s over our processes = {self.cpu_s / self.n * 1000:.1f} "
                "CPU-s per 1,000 jobs",
                "  of which "
                + ", ".join(
                    f"{name} {cpu / self.n * 1000:.2f}"
                    for name, cpu in sorted(self.cpu_by_service.items(), key=lambda i: -i[1])
                ),
                "  beside them "
                + ", ".join(
                    f"{name} {cpu / self.n * 1000:.2f}"
                    for name, cpu in sorted(self.cpu_beside.items(), key=lambda i: -i[1])
                ),
                f"  the machine was {self.machine_busy:.0%} busy ({CORES} cores; ours and beside"
                " them)",
                f"  outcomes: {o.succeeded} succeeded, {o.not_succeeded} not, {o.retried} needed "
                f"more than one attempt, {o.lost_attempts} lost leases, {o.dead} dead"
                + ("" if o.clean else "   <-- FAILED: every noop job must succeed at once"),
            ]
        )


@dataclass
class FreshStack:
    """Every service as a real process on a new database, vhost and Mongo database."""

    stack: Stack
    database_url: str
    database: str
    vhost: str
    pg_server: PostgresServer
    rabbit_server: RabbitServer
    resolved: tuple[Resolved, ...]

    async def close(self) -> None:
        """Stop the services, drop the database and vhost (the logs stay in stack.log_dir)."""
        await asyncio.to_thread(self.stack.stop)
        await self.rabbit_server.delete_vhost(self.vhost)
        await self.pg_server.drop(self.database)
        for resolved in self.resolved:
            resolved.close()


async def start_fresh_stack(workers: int) -> FreshStack:
    """Start a fresh stack (as the e2e tests do); the caller waits for it to be ready."""
    postgres = resolve_postgres()
    rabbit, management = resolve_rabbitmq()
    mongo = resolve_mongo()
    print(f"PostgreSQL: {postgres.source}; RabbitMQ: {rabbit.source}; MongoDB: {mongo.source}")
    database = f"bench_{uuid.uuid4().hex[:8]}"
    pg_server = PostgresServer(postgres.url)
    database_url = await pg_server.create(database)
    rabbit_server = RabbitServer(rabbit.url, management)
    vhost = await rabbit_server.create_vhost()
    base = Path(tempfile.mkdtemp(prefix="bench-"))
    config = StackConfig(
        database_url=database_url,
        amqp_url=rabbit_server.url_for(vhost),
        mongo_url=mongo.url,
        mongo_db=f"bench_{uuid.uuid4().hex[:8]}",
        artifacts_dir=str(base / "artifacts"),
        gateway_port=free_port(),
        submission_port=free_port(),
        scheduler_port=free_port(),
        dashboard_port=free_port(),
        worker_ports=tuple(free_port() for _ in range(workers)),
        workers=workers,
        # Development: the demo logins the tests use are seeded only there (its secrets
        # are still fresh ones, StackConfig's).
        environment="development",
        extra_env={
            "SCHEDULER_LOG_LEVEL": "WARNING",
            "WORKER_LOG_LEVEL": "WARNING",
            "SUBMISSION_LOG_LEVEL": "WARNING",
            "GATEWAY_LOG_LEVEL": "WARNING",
            "DASHBOARD_LOG_LEVEL": "WARNING",
            # The bench pushes hundreds of requests a second as one user: no per-user limit.
            "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
        },
    )
    stack = Stack(config, base / "logs")
    stack.start()
    return FreshStack(
        stack, database_url, database, vhost, pg_server, rabbit_server, (mongo, postgres, rabbit)
    )


async def measure(
    stack: Stack, database_url: str, name: str, submit: Callable[[], Awaitable[list[str]]]
) -> Phase:
    """One phase: ``submit`` the jobs (their ids), wait until each is terminal, print and
    return the figures (CPU of our services and beside them over the whole phase)."""
    cpu_before, beside_before, t0 = (
        service_cpu_seconds(stack),
        infra_cpu_seconds(),
        time.perf_counter(),
    )
    ids = await submit()
    accepted_s = time.perf_counter() - t0
    outcomes = await wait_terminal(database_url, ids)
    phase = Phase(
        name,
        len(ids),
        accepted_s,
        time.perf_counter() - t0,
        outcomes,
        cpu_since(stack, cpu_before),
        infra_cpu_since(beside_before),
    )
    print(phase.report(), flush=True)
    return phase


async def half_of_peak(
    client: KeepAliveClient, stack: Stack, database_url: str, rate: float, seconds: float
) -> Phase:
    """Single requests paced at ``rate`` (an open loop: each fires at its time, whatever the
    earlier answers) for ``seconds``: the latency of a platform that is not saturated."""

    async def submit() -> list[str]:
        traffic = Traffic()
        await asyncio.gather(*await offer(client, traffic, plan(rate, seconds, 0.0, 1), 1000))
        if traffic.refused:
            print(f"  refused: {dict(traffic.refused)} {traffic.refusal_bodies}")
        return traffic.accepted

    name = f"half of the single-request peak ({rate:.0f} jobs/s paced for {seconds:.0f} s)"
    return await measure(stack, database_url, name, submit)


async def run(
    n: int,
    concurrency: int,
    workers: int,
    profile_dir: Path | None = None,
    half_peak_seconds: float = 15.0,
) -> list[Phase]:
    """The three phases on a fresh stack; each phase's figures and outcomes."""
    phases: list[Phase] = []
    fresh = await start_fresh_stack(workers)
    stack, database_url = fresh.stack, fresh.database_url
    profilers: list[subprocess.Popen[bytes]] = []
    try:
        await asyncio.to_thread(stack.wait_ready, 90.0)
        if profile_dir:
            profilers = start_profilers(stack, profile_dir)
        gateway = stack.services["gateway"].url
        async with httpx.AsyncClient(base_url=gateway, timeout=60) as client:
            login = await client.post(
                "/auth/login", json={"email": "admin@test.com", "password": "admin123"}
            )
            token = login.json()["token"]
            client.headers["Authorization"] = f"Bearer {token}"
            # The load must not take the CPU it measures: httpx costs about 1.1 ms of CPU per
            # request here, this keep-alive client about 0.1 ms.
            fast = KeepAliveClient(gateway, timeout=60)
            fast.authorize(token)
            bodies = [
                json.dumps({"type": "simulate", "priority": p, "payload": NOOP}).encode()
                for p in (1, 2, 3)
            ]
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> str:
                async with gate:
                    status, body = await fast.post("/api/jobs", bodies[i % 3])
                    if status != 202:
                        raise RuntimeError(f"POST /api/jobs answered {status}: {body[:300]!r}")
                    return str(json.loads(body)["jobId"])

            async def singles() -> list[str]:
                return list(await asyncio.gather(*(one(i) for i in range(n))))

            async def batch() -> list[str]:
                spec = {"type": "simulate", "priority": 2, "payload": NOOP}
                r = await client.post("/api/batches", json={"jobs": [spec] * n})
                r.raise_for_status()
                return [str(j) for j in r.json()["jobIds"]]

            name = f"single submissions ({concurrency} in flight, {workers} workers)"
            phases.append(await measure(stack, database_url, name, singles))
            phases.append(await measure(stack, database_url, "one batch", batch))
            phases.append(
                await half_of_peak(
                    fast, stack, database_url, phases[0].end_to_end_per_s / 2, half_peak_seconds
                )
            )
            fast.close()
    finally:
        stop_profilers(profilers)
        await fresh.close()
    return phases


def main() -> None:
    n = int(os.environ.get("N", "2000"))
    concurrency = int(os.environ.get("C", "64"))
    workers = int(os.environ.get("WORKERS", "2"))
    profile_dir = Path(os.environ["PROFILE"]) if os.environ.get("PROFILE") else None
    half_peak_seconds = float(os.environ.get("HALF_PEAK_SECONDS", "15"))
    phases = asyncio.run(run(n, concurrency, workers, profile_dir, half_peak_seconds))
    sys.stdout.flush()
    if not all(phase.outcomes.clean for phase in phases):
        print("\nbench FAILED: some noop job did not succeed on its first attempt")
        sys.exit(1)


if __name__ == "__main__":
    main()
