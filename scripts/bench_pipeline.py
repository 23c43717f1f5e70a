"""Benchmark the whole pipeline on this machine: ``make bench`` (N=2000 WORKERS=2 by default).

Starts every service as a real process on a fresh PostgreSQL database, RabbitMQ vhost and
Mongo database (as the e2e tests do), configured as ``make dev`` runs them (the default log
level, INFO, and its readable log lines), submits N no-op ``simulate`` jobs through the
gateway, single requests with C in flight, then one batch, then single requests paced at half
the first phase's rate, and prints figures: submission rate, time until every job is terminal,
end-to-end throughput, latency percentiles (accepted -> started, accepted -> finished, from
PostgreSQL) and CPU-seconds of our processes per 1,000 jobs.

Every phase runs twice on the same stack: on the empty stores, then with history
(``history_loader``: HISTORY_JOBS, 1,000,000, finished jobs of the last five days in
PostgreSQL, and HISTORY_SUBMISSIONS, 200,000, published submissions in MongoDB, loaded once the
empty block is done, measured once the scheduler's retention sweep has passed over them), and
the two blocks are compared. ``HISTORY=0``: the empty block only. ``LOG_LEVEL=WARNING``: every
service at that level instead of its default (as the bench ran up to 2026-12-03).

Nothing here asserts on speed, but outcomes are checked: every noop job must succeed on its
first attempt with no lost lease, else the bench exits non-zero (a rate that hides re-runs or
dead jobs is worse than no figure).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import httpx
from bench_loadgen import NOOP, KeepAliveClient, Traffic, offer, plan
from bench_machine import machine_busy_seconds
from history_loader import (
    Loaded,
    bench_history,
    load_job_store,
    load_submissions,
    wait_until_folded,
)

from jobs_common.db import create_engine
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


def infra_cpu_since(before: dict[tuple[str, int], float]) -> dict[str, float]:
    """CPU each kind beside ours spent since ``before``, per process: one that started since
    counts whole, one that exited (a backend of a closed connection) is left out, never
    subtracted."""
    cpu: dict[str, float] = {}
    for (key, pid), seconds in infra_cpu_seconds().items():
        cpu[key] = cpu.get(key, 0.0) + max(0.0, seconds - before.get((key, pid), 0.0))
    return cpu


def service_cpu_seconds(stack: Stack) -> dict[str, float]:
    """CPU seconds of each service process; workers summed as ``worker``."""
    cpu: dict[str, float] = {}
    for name, service in stack.services.items():
        if service.process is not None:
            key = name.split("-")[0]
            cpu[key] = cpu.get(key, 0.0) + process_cpu_seconds(service.process.pid)
    return cpu


CORES = os.cpu_count() or 1


@dataclass
class Beside:
    """Which processes beside ours the figures count, on a machine other work may share: the
    bench database's PostgreSQL backends (its name in their process title; the cluster's
    shared writers and other databases' backends are left out), the bench's own MongoDB
    stand-in (its port), RabbitMQ's ``beam.smp`` (one for every vhost: what others run on it
    counts too, an upper bound). Unset: every process of that kind."""

    database: str | None = None
    mongo_port: int | None = None

    def key_of(self, comm: str, title: str) -> str | None:
        title += " "
        if comm == "postgres":
            if self.database is None or f" {self.database} " in title:
                return "postgresql"
            # The cluster's WAL writer, checkpointer and background writer: shared with every
            # other database, but what a store with history costs shows there (page images,
            # evicted dirty pages), so they count apart.
            return "postgresql writers" if any(w in title for w in PG_WRITERS) else None
        if comm == "beam.smp":
            return "rabbitmq"
        if "nx-27017" in title and (self.mongo_port is None or f"-p {self.mongo_port} " in title):
            return "mongodb stand-in"
        return None


BESIDE = Beside()  # start_fresh_stack narrows it to the stack it starts
PG_WRITERS = ("walwriter", "checkpointer", "background writer")


@dataclass(frozen=True)
class StoreCounters:
    """What PostgreSQL did, from its statistics: WAL written (the whole cluster's: alone on the
    machine, the bench's) and the bench database's block reads that missed shared buffers."""

    wal_bytes: int = 0
    blocks_read: int = 0
    blocks_hit: int = 0
    page_images: int = 0  # full-page images in the WAL (first change of a page after a checkpoint)

    @classmethod
    async def read(cls, database_url: str) -> StoreCounters:
        connection = await asyncpg.connect(plain(database_url))
        try:
            row = await connection.fetchrow(
                "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS wal, blks_read, blks_hit, "
                "(SELECT wal_fpi FROM pg_stat_wal) AS fpi "
                "FROM pg_stat_database WHERE datname = current_database()"
            )
        finally:
            await connection.close()
        assert row is not None
        return cls(int(row["wal"]), int(row["blks_read"]), int(row["blks_hit"]), int(row["fpi"]))

    def since(self, before: StoreCounters) -> StoreCounters:
        return StoreCounters(
            self.wal_bytes - before.wal_bytes,
            self.blocks_read - before.blocks_read,
            self.blocks_hit - before.blocks_hit,
            self.page_images - before.page_images,
        )


def _processes() -> Iterator[tuple[int, str, str]]:
    """(pid, comm, process title) of every process."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            comm = (proc / "comm").read_text().strip()
            title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        yield int(proc.name), comm, title


def infra_cpu_seconds() -> dict[tuple[str, int], float]:
    """CPU seconds of each process beside ours (:data:`BESIDE`), by kind and pid: PostgreSQL's,
    RabbitMQ's and the MongoDB stand-in's."""
    cpu: dict[tuple[str, int], float] = {}
    for pid, comm, title in _processes():
        key = BESIDE.key_of(comm, title)
        if key is not None:
            cpu[key, pid] = process_cpu_seconds(pid)
    return cpu


def stand_in_pids() -> list[int]:
    """The bench's own MongoDB stand-in (a Python process: py-spy records it too)."""
    return [
        pid
        for pid, comm, title in _processes()
        if BESIDE.mongo_port is not None and BESIDE.key_of(comm, title) == "mongodb stand-in"
    ]


def start_profilers(stack: Stack, directory: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy on every service process and the MongoDB stand-in (collapsed stacks, one file
    each): ``PROFILE=dir``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    directory.mkdir(parents=True, exist_ok=True)
    targets = {name: s.process.pid for name, s in stack.services.items() if s.process is not None}
    for index, pid in enumerate(stand_in_pids()):
        targets[f"mongodb-stand-in{index or ''}"] = pid
    return [
        subprocess.Popen(
            [
                spy,
                "record",
                "--pid",
                str(pid),
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
        for name, pid in targets.items()
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


POLL_SECONDS = 0.05  # as the baselines' wait_done
POLL_CHUNK = 200
FINISHED = (
    "SELECT id::text FROM jobs WHERE id = ANY($1::uuid[]) "
    "AND status IN ('succeeded', 'dead', 'cancelled')"
)


async def wait_until_finished(connection: asyncpg.Connection, job_ids: list[str]) -> None:
    """Poll every 50 ms until every job is terminal, as cheaply as the baselines' count of
    their own table: each poll looks up (by primary key) the first jobs not yet seen finished,
    and the next ones at once while all of those were. Polling the whole list each time cost
    0.3-1.1 CPU-s per 1,000 jobs (a generic plan matched every finished row against the list),
    taken from the platform it measured."""
    await connection.execute("SET plan_cache_mode = force_custom_plan")
    remaining = list(job_ids)
    while remaining:
        head = remaining[:POLL_CHUNK]
        finished = {row[0] for row in await connection.fetch(FINISHED, head)}
        if finished:
            remaining = [job_id for job_id in remaining if job_id not in finished]
        if len(finished) < len(head):
            await asyncio.sleep(POLL_SECONDS)


async def wait_terminal(database_url: str, job_ids: list[str]) -> Outcomes:
    """Wait until every job is terminal, then read what happened to each."""
    connection = await asyncpg.connect(plain(database_url))
    try:
        await wait_until_finished(connection, job_ids)
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
    store: StoreCounters = field(default_factory=StoreCounters)  # over the phase
    machine_cpu_s: float = 0.0  # every process of the machine, ours and others

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
                f" them), {self.machine_cpu_s / (self.total_s * CORES):.0%} with everything else",
                f"  PostgreSQL per job: {self.store.wal_bytes / self.n / 1024:.1f} kB of WAL "
                f"({self.store.page_images / self.n:.2f} full-page images), "
                f"{self.store.blocks_read / self.n:.1f} blocks read past shared buffers "
                f"({self.store.blocks_hit / self.n:.0f} hit)",
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


def service_log_env(level: str | None) -> dict[str, str]:
    """Every service's log level: ``level``, or None for each service's default (INFO, as
    ``make dev`` and the compose file run them)."""
    if not level:
        return {}
    services = ("SCHEDULER", "WORKER", "SUBMISSION", "GATEWAY", "DASHBOARD")
    return {f"{service}_LOG_LEVEL": level.upper() for service in services}


async def start_fresh_stack(workers: int, log_level: str | None = None) -> FreshStack:
    """Start a fresh stack (as the e2e tests do, configured as ``make dev`` runs it: readable
    log lines at each service's default level unless ``log_level``); the caller waits for it
    to be ready."""
    postgres = resolve_postgres()
    rabbit, management = resolve_rabbitmq()
    mongo = resolve_mongo()
    print(f"PostgreSQL: {postgres.source}; RabbitMQ: {rabbit.source}; MongoDB: {mongo.source}")
    BESIDE.mongo_port = urlsplit(mongo.url).port  # a stand-in listens on it (MONGO_URL too)
    print(f"services log at {log_level.upper() if log_level else 'their default level (INFO)'}")
    database = f"bench_{uuid.uuid4().hex[:8]}"
    BESIDE.database = database
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
        log_json=False,  # as `make dev` (scripts/dev.py) writes them
        extra_env={
            **service_log_env(log_level),
            # The bench pushes hundreds of requests a second as one user: no per-user limit.
            "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
        },
    )
    stack = Stack(config, base / "logs")
    stack.start()
    return FreshStack(
        stack, database_url, database, vhost, pg_server, rabbit_server, (mongo, postgres, rabbit)
    )


# The bench's history: ten owners with a tenth each, the demo user and admin among them.
HISTORY_OWNERS = ("user@test.com", "admin@test.com", *(f"owner{i}@test.com" for i in range(8)))
RETENTION_PASSED = "scheduler_retention_oldest_finished_seconds"


@dataclass(frozen=True)
class HistorySize:
    jobs: int = 1_000_000  # finished jobs in PostgreSQL
    submissions: int = 200_000  # published submissions in MongoDB (the newest jobs')

    @staticmethod
    def from_environment() -> HistorySize | None:
        """HISTORY_JOBS, HISTORY_SUBMISSIONS; None with HISTORY=0 (no history block)."""
        if os.environ.get("HISTORY", "1") == "0":
            return None
        return HistorySize(
            jobs=int(os.environ.get("HISTORY_JOBS", "1000000")),
            submissions=int(os.environ.get("HISTORY_SUBMISSIONS", "200000")),
        )

    def describe(self) -> str:
        return (
            f"{self.jobs:,} jobs of history in PostgreSQL, {self.submissions:,} submissions "
            "in MongoDB"
        )


async def oldest_kept_seconds(client: httpx.AsyncClient, url: str) -> float:
    """The scheduler's ``scheduler_retention_oldest_finished_seconds{status="succeeded"}``,
    set by each retention pass (0 before the first)."""
    answer = await client.get(url)
    for line in answer.text.splitlines():
        if line.startswith(RETENTION_PASSED) and 'status="succeeded"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def wait_for_retention_pass(stack: Stack, *, older_than: timedelta, timeout: float) -> float:
    """Wait until a retention pass has seen the history (the oldest succeeded job it keeps is
    older than ``older_than``): the sweep runs every 60 s by default. Seconds waited."""
    url = stack.services["scheduler"].metrics_url
    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=10) as client:
        while await oldest_kept_seconds(client, url) < older_than.total_seconds():
            if time.perf_counter() - started > timeout:
                raise TimeoutError(f"no retention pass over the history after {timeout:.0f} s")
            await asyncio.sleep(1.0)
    return time.perf_counter() - started


async def load_history(
    fresh: FreshStack, size: HistorySize, projects: Sequence[str] = ()
) -> Loaded:
    """Load the history into the stack's own stores while it runs (``history_loader``), then
    wait until the scheduler has no rollup delta left to fold and its retention sweep has
    passed over the history. ``projects``: the project ids the jobs are spread over (``make
    bench-history``); none, each owner's personal default project (``make bench``)."""
    history = bench_history(size.jobs, HISTORY_OWNERS, projects)
    print(
        f"\nloading the history: {history.describe()}; the submissions of the newest "
        f"{size.submissions:,} into MongoDB",
        flush=True,
    )
    loaded = Loaded()
    engine = create_engine(fresh.database_url, pool_size=2)
    try:
        newest = await load_job_store(engine, history, loaded, newest=size.submissions)
        config = fresh.stack.config
        # The scheduler's fold and its retention sweep (every 60 s) run while MongoDB loads.
        started = time.perf_counter()
        await load_submissions(newest, config.mongo_url, config.mongo_db, loaded)
        await wait_until_folded(engine, below=1_000, timeout=900.0)
        loaded.seconds["until the rollups were folded (from the MongoDB load's start)"] = (
            time.perf_counter() - started
        )
    finally:
        await engine.dispose()
    loaded.seconds["then until a retention pass had seen it"] = await wait_for_retention_pass(
        fresh.stack, older_than=timedelta(days=1), timeout=300.0
    )
    loaded.seconds["then until the machine was quiet"] = await wait_until_quiet(timeout=120.0)
    print(loaded.report(), flush=True)
    return loaded


QUIET_CORES = 0.25  # the machine's busy share below which the stores are at rest
QUIET_SECONDS = 3


async def wait_until_quiet(*, timeout: float) -> float:
    """Wait until the whole machine has used under ``QUIET_CORES`` for ``QUIET_SECONDS`` in a
    row (what the load set going, a retention pass over the history, writes the kernel still
    flushes, has ended): the second block measures stores that hold history, not the tail of
    loading it. Gives up after ``timeout``; the seconds waited."""
    started = time.perf_counter()
    quiet_for = 0
    before = machine_busy_seconds()
    while quiet_for < QUIET_SECONDS and time.perf_counter() - started < timeout:
        await asyncio.sleep(1.0)
        now = machine_busy_seconds()
        quiet_for = quiet_for + 1 if now - before < QUIET_CORES else 0
        before = now
    return time.perf_counter() - started


async def measure(
    stack: Stack, database_url: str, name: str, submit: Callable[[], Awaitable[list[str]]]
) -> Phase:
    """One phase: ``submit`` the jobs (their ids), wait until each is terminal, print and
    return the figures (CPU of our services and beside them over the whole phase)."""
    store_before = await StoreCounters.read(database_url)
    cpu_before, beside_before, machine_before, t0 = (
        service_cpu_seconds(stack),
        infra_cpu_seconds(),
        machine_busy_seconds(),
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
        (await StoreCounters.read(database_url)).since(store_before),
        machine_busy_seconds() - machine_before,
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


@dataclass
class Submitter:
    """The bench's clients on a stack's gateway, logged in as the admin: single requests over
    the keep-alive client (httpx costs about 1.1 ms of CPU per request here, that client about
    0.1 ms: the load must not take the CPU it measures), a batch through httpx."""

    client: httpx.AsyncClient
    fast: KeepAliveClient
    concurrency: int
    bodies: list[bytes] = field(
        default_factory=lambda: [
            json.dumps({"type": "simulate", "priority": p, "payload": NOOP}).encode()
            for p in (1, 2, 3)
        ]
    )

    @classmethod
    async def login(cls, gateway: str, concurrency: int) -> Submitter:
        client = httpx.AsyncClient(base_url=gateway, timeout=60)
        login = await client.post(
            "/auth/login", json={"email": "admin@test.com", "password": "admin123"}
        )
        token = login.json()["token"]
        client.headers["Authorization"] = f"Bearer {token}"
        fast = KeepAliveClient(gateway, timeout=60)
        fast.authorize(token)
        return cls(client, fast, concurrency)

    async def singles(self, n: int) -> list[str]:
        """``n`` jobs, one request each, ``concurrency`` in flight; their ids."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(i: int) -> str:
            async with gate:
                status, body = await self.fast.post("/api/jobs", self.bodies[i % 3])
                if status != 202:
                    raise RuntimeError(f"POST /api/jobs answered {status}: {body[:300]!r}")
                return str(json.loads(body)["jobId"])

        return list(await asyncio.gather(*(one(i) for i in range(n))))

    async def batch(self, n: int) -> list[str]:
        spec = {"type": "simulate", "priority": 2, "payload": NOOP}
        answer = await self.client.post("/api/batches", json={"jobs": [spec] * n})
        answer.raise_for_status()
        return [str(j) for j in answer.json()["jobIds"]]

    async def close(self) -> None:
        self.fast.close()
        await self.client.aclose()


EMPTY = "empty stores"
WARM_UP = 200  # jobs, single and as a batch, before the first block


async def warm_up(fresh: FreshStack, concurrency: int) -> None:
    """Jobs through the fresh stack before anything is measured, so that neither block pays
    what each process does once (imports on first use, statements compiled and cached, pools
    filled): without them the first block ran on a cold stack, the second on a warm one."""
    submitter = await Submitter.login(fresh.stack.services["gateway"].url, concurrency)
    try:
        ids = await submitter.singles(WARM_UP) + await submitter.batch(WARM_UP)
        outcomes = await wait_terminal(fresh.database_url, ids)
    finally:
        await submitter.close()
    print(f"warm-up: {len(ids)} jobs, {outcomes.succeeded} succeeded (not measured)", flush=True)


# Awaited before the single-request phase ("single") and the batch ("batch") of each block
# (its label): ``make bench-compare`` runs Celery and Dramatiq there, next to the phase each
# is compared with.
BeforePhase = Callable[[str, str], Awaitable[None]]


async def nothing_before(label: str, phase: str) -> None:
    return None


async def phases(
    fresh: FreshStack,
    n: int,
    concurrency: int,
    workers: int,
    half_peak_seconds: float,
    profile_dir: Path | None,
    label: str = EMPTY,
    before: BeforePhase = nothing_before,
) -> list[Phase]:
    """The three phases on ``fresh``; each phase's figures and outcomes."""
    stack, database_url = fresh.stack, fresh.database_url
    result: list[Phase] = []
    profilers = start_profilers(stack, profile_dir) if profile_dir else []
    submitter = await Submitter.login(stack.services["gateway"].url, concurrency)
    try:
        name = f"single submissions ({concurrency} in flight, {workers} workers)"
        await before(label, "single")
        result.append(
            await measure(stack, database_url, name, functools.partial(submitter.singles, n))
        )
        await before(label, "batch")
        result.append(
            await measure(stack, database_url, "one batch", functools.partial(submitter.batch, n))
        )
        rate = result[0].end_to_end_per_s / 2
        result.append(
            await half_of_peak(submitter.fast, stack, database_url, rate, half_peak_seconds)
        )
    finally:
        await submitter.close()
        stop_profilers(profilers)
    return result


def compare_blocks(blocks: dict[str, list[Phase]]) -> str:
    """Each phase's figures on the empty stores against the same with history."""
    if len(blocks) < 2:
        return ""
    (_, empty), (label, full) = list(blocks.items())[:2]
    lines = [f"\n{EMPTY} -> {label}:"]
    for before, after in zip(empty, full, strict=True):
        name = before.name.split(" (")[0]
        rate = after.end_to_end_per_s / before.end_to_end_per_s
        lines.append(
            f"  {name:24} {before.end_to_end_per_s:6.0f} -> {after.end_to_end_per_s:6.0f} jobs/s"
            f" end to end ({rate:.2f}x); accepted->finished p50 "
            f"{percentile(before.outcomes.latencies, 0.5):.3f} -> "
            f"{percentile(after.outcomes.latencies, 0.5):.3f} s; CPU-s per 1,000 jobs "
            f"{before.cpu_s / before.n * 1000:.1f} -> {after.cpu_s / after.n * 1000:.1f}"
        )
        services = sorted(
            set(before.cpu_by_service) | set(after.cpu_by_service),
            key=lambda k: -after.cpu_by_service.get(k, 0.0),
        )
        beside = sorted(
            set(before.cpu_beside) | set(after.cpu_beside),
            key=lambda k: -after.cpu_beside.get(k, 0.0),
        )
        lines.append(
            "    "
            + ", ".join(
                f"{k} {before.cpu_by_service.get(k, 0.0) / before.n * 1000:.2f} -> "
                f"{after.cpu_by_service.get(k, 0.0) / after.n * 1000:.2f}"
                for k in services
            )
            + "; beside: "
            + ", ".join(
                f"{k} {before.cpu_beside.get(k, 0.0) / before.n * 1000:.2f} -> "
                f"{after.cpu_beside.get(k, 0.0) / after.n * 1000:.2f}"
                for k in beside
            )
        )
    return "\n".join(lines)


async def run(
    n: int,
    concurrency: int,
    workers: int,
    profile_dir: Path | None = None,
    half_peak_seconds: float = 15.0,
    history: HistorySize | None = None,
    log_level: str | None = None,
    before: BeforePhase = nothing_before,
) -> dict[str, list[Phase]]:
    """The three phases on a fresh stack's empty stores, then (``history``) the same again
    once the history is loaded into them: each block's phases, by label (empty first).
    ``PROFILE`` records each block in a folder of its own (``empty``, ``history``);
    ``before`` is awaited before each block's single-request phase and its batch."""
    blocks: dict[str, list[Phase]] = {}
    fresh = await start_fresh_stack(workers, log_level)
    try:
        await asyncio.to_thread(fresh.stack.wait_ready, 90.0)
        await warm_up(fresh, concurrency)
        print(f"\n===== {EMPTY} =====", flush=True)
        blocks[EMPTY] = await phases(
            fresh,
            n,
            concurrency,
            workers,
            half_peak_seconds,
            profile_dir / "empty" if profile_dir else None,
            EMPTY,
            before,
        )
        if history is not None:
            await load_history(fresh, history)
            label = f"with history ({history.describe()})"
            print(f"\n===== {label} =====", flush=True)
            blocks[label] = await phases(
                fresh,
                n,
                concurrency,
                workers,
                half_peak_seconds,
                profile_dir / "history" if profile_dir else None,
                label,
                before,
            )
            print(compare_blocks(blocks), flush=True)
    finally:
        await fresh.close()
    return blocks


def main() -> None:
    n = int(os.environ.get("N", "2000"))
    concurrency = int(os.environ.get("C", "64"))
    workers = int(os.environ.get("WORKERS", "2"))
    profile_dir = Path(os.environ["PROFILE"]) if os.environ.get("PROFILE") else None
    half_peak_seconds = float(os.environ.get("HALF_PEAK_SECONDS", "15"))
    blocks = asyncio.run(
        run(
            n,
            concurrency,
            workers,
            profile_dir,
            half_peak_seconds,
            HistorySize.from_environment(),
            os.environ.get("LOG_LEVEL") or None,
        )
    )
    sys.stdout.flush()
    if not all(phase.outcomes.clean for block in blocks.values() for phase in block):
        print("\nbench FAILED: some noop job did not succeed on its first attempt")
        sys.exit(1)


if __name__ == "__main__":
    main()
