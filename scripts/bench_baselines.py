"""Celery 5 and Dramatiq 2 on this machine, as baselines for our platform's own benchmark.

``python scripts/bench_baselines.py --n 2000 --concurrency 64`` (dependencies:
``pip install -r scripts/requirements-bench.txt``). Same broker, same PostgreSQL, noop work;
each baseline gets a throwaway database and vhost, and its worker is a real subprocess with
two worker processes (one per core). Both make the durability promises ours makes: a
publish returns once the broker confirmed it, a message is acked only after its job ran, and
every job's outcome is a committed PostgreSQL row.

Measured for each: the accepted rate (N submissions from ``concurrency`` threads), end-to-end
jobs/s (N / first submission -> N-th stored outcome, seen by polling PostgreSQL every 50 ms),
the user+system CPU of the worker's process tree over that window, and whether every job
succeeded exactly once. Figures and outcome checks only; nothing asserts on speed.

From code: ``run_celery(n, concurrency, ...)`` and ``run_dramatiq(...)`` (``*_async`` inside an
event loop) return a :class:`BaselineReport`. The worker subprocesses import this same module
(``celery -A bench_baselines``, ``dramatiq bench_baselines``), told their role by
``BENCH_BASELINES_WORKER``.
"""

from __future__ import annotations

import abc
import argparse
import asyncio
import contextlib
import ipaddress
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

import aio_pika
import aiormq
import asyncpg
import dramatiq
import psycopg
from bench_machine import machine_busy_seconds
from celery import Celery  # type: ignore[import-untyped]
from dramatiq.brokers.rabbitmq import RabbitmqBroker

from jobs_testing.infra import resolve_postgres, resolve_rabbitmq
from jobs_testing.plugin import PostgresServer, RabbitServer

SCRIPTS = Path(__file__).resolve().parent
WORKER_PROCESSES = 2  # one per core of this machine
DRAMATIQ_THREADS = 8  # `dramatiq --threads`: the documented default
DEFAULT_MANAGEMENT_URL = "http://guest:guest@127.0.0.1:15672"
ROLE_ENV = "BENCH_BASELINES_WORKER"  # "celery" or "dramatiq" in a worker subprocess
BROKER_ENV = "BENCH_BASELINES_BROKER_URL"
DATABASE_ENV = "BENCH_BASELINES_DATABASE_URL"  # libpq URL of the throwaway database
_TICKS = os.sysconf("SC_CLK_TCK")


class BaselineReport(TypedDict):
    name: str
    n: int
    accepted_per_s: float  # submissions confirmed by the broker per second
    end_to_end_per_s: float  # n / seconds
    seconds: float  # first submission -> last stored outcome
    ok: bool  # every job succeeded exactly once, no message left on the broker
    problems: list[str]
    cpu_seconds: float  # user+system CPU of the worker's process tree over `seconds`
    submit_seconds: float
    submitter_cpu_seconds: float  # this process (the clients) during the submissions
    machine_cpu_seconds: float  # every process on the machine (2 cores) over `seconds`
    settings: str


# --- Celery ---------------------------------------------------------------------------------

CELERY_TASK = "bench_baselines.noop"
CELERY_QUEUE = "celery"  # Celery's default queue


def celery_noop() -> None:
    """The Celery job: nothing at all, so what is measured is the framework's own cost."""


def make_celery_app(broker_url: str, result_backend: str, *, pool_limit: int = 10) -> Any:
    """A Celery app with the noop task registered as ``CELERY_TASK``.

    The settings give the promises ours makes: the message is acked only after the task ran
    and its result was committed (``task_acks_late``; requeued if a pool child dies,
    ``task_reject_on_worker_lost``), every publish waits for the broker's confirm
    (``confirm_publish``), and every task's result is a row in PostgreSQL (the SQLAlchemy
    ``db+postgresql+psycopg://`` backend, psycopg 3). The rest are Celery's defaults, notably
    ``worker_prefetch_multiplier`` 4. ``pool_limit`` caps the client's broker connections:
    the benchmark sets it to its number of submitting threads so they all publish at once.
    """
    app = Celery("bench_baselines", broker=broker_url, backend=result_backend)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        broker_transport_options={"confirm_publish": True},
        broker_connection_retry_on_startup=True,
        broker_pool_limit=pool_limit,
        task_ignore_result=False,  # the default, stated: every result is stored
        worker_prefetch_multiplier=4,  # the default, stated: 8 unacked messages for 2 children
        # The bench creates the result tables once before the worker starts: processes that
        # create them concurrently can race in PostgreSQL's catalog.
        database_create_tables_at_setup=False,
    )
    app.task(name=CELERY_TASK)(celery_noop)
    return app


def celery_backend_url(database_url: str) -> str:
    """The result backend URL for a libpq URL: SQLAlchemy through psycopg 3 (its 2.1 default)."""
    return "db+" + database_url.replace("postgresql://", "postgresql+psycopg://", 1)


def create_celery_tables(result_backend: str) -> None:
    """Celery's result tables (``celery_taskmeta``, ``celery_tasksetmeta``)."""
    from celery.backends.database.models import (  # type: ignore[import-untyped]
        ResultModelBase,
    )
    from sqlalchemy import create_engine

    engine = create_engine(result_backend.removeprefix("db+"))
    try:
        ResultModelBase.metadata.create_all(engine)
    finally:
        engine.dispose()


# --- Dramatiq -------------------------------------------------------------------------------

DRAMATIQ_ACTOR = "bench_record_done"
DRAMATIQ_QUEUE = "default"
CREATE_DONE_TABLE = (
    "CREATE TABLE bench_done (job_id integer PRIMARY KEY,"
    " executions integer NOT NULL DEFAULT 1,"
    " done_at timestamptz NOT NULL DEFAULT clock_timestamp())"
)
# One row per job; another execution of the same job bumps ``executions`` instead.
RECORD_DONE = (
    "INSERT INTO bench_done (job_id) VALUES (%s) "
    "ON CONFLICT (job_id) DO UPDATE SET executions = bench_done.executions + 1"
)
_thread_state = threading.local()


def record_done(job_id: int) -> None:
    """The Dramatiq job: one committed INSERT keyed by the job's number.

    Dramatiq keeps no results, so this row is the stored outcome (autocommit: committed per
    job, before the worker acks the message); a connection per worker thread.
    """
    connection: psycopg.Connection[Any] | None = getattr(_thread_state, "connection", None)
    if connection is None:
        connection = psycopg.connect(os.environ[DATABASE_ENV], autocommit=True)
        _thread_state.connection = connection
    connection.execute(RECORD_DONE, (job_id,))


def make_dramatiq_broker(url: str) -> RabbitmqBroker:
    """Publisher confirms on; Dramatiq's messages are persistent, its queues durable."""
    return RabbitmqBroker(url=url, confirm_delivery=True)


def declare_actor(broker: RabbitmqBroker) -> dramatiq.Actor[[int], None]:
    """The actor on ``broker``, with Dramatiq's default options and middleware (retries)."""
    decorate = dramatiq.actor(broker=broker, actor_name=DRAMATIQ_ACTOR, queue_name=DRAMATIQ_QUEUE)
    return decorate(record_done)


# In a worker subprocess: `celery -A bench_baselines` takes `app`, `dramatiq bench_baselines`
# the global broker.
app: Any = None
if os.environ.get(ROLE_ENV) == "celery":
    app = make_celery_app(os.environ[BROKER_ENV], celery_backend_url(os.environ[DATABASE_ENV]))
elif os.environ.get(ROLE_ENV) == "dramatiq":
    broker = make_dramatiq_broker(os.environ[BROKER_ENV])
    dramatiq.set_broker(broker)
    declare_actor(broker)


# --- Services, processes, CPU ---------------------------------------------------------------


def _check_loopback(*urls: str) -> None:
    """Refuse a server that is not on this machine: the benchmark's traffic stays local."""
    for url in urls:
        host = urlsplit(url).hostname or ""
        with contextlib.suppress(ValueError):
            if host == "localhost" or ipaddress.ip_address(host).is_loopback:
                continue
        raise ValueError(f"{url!r}: the benchmark talks to loopback addresses only")


@contextlib.contextmanager
def resolved_services(
    postgres_url: str | None, amqp_url: str | None, management_url: str | None
) -> Iterator[tuple[str, str, str, str]]:
    """(PostgreSQL admin URL, AMQP URL, management URL, where from): given, else resolved as
    the tests resolve them (environment, a container if Docker answers, else 127.0.0.1)."""
    closers: list[Callable[[], None]] = []
    sources = ["PostgreSQL: given", "RabbitMQ: given"]
    try:
        if postgres_url is None:
            postgres = resolve_postgres()
            closers.append(postgres.close)
            postgres_url, sources[0] = postgres.url, f"PostgreSQL: {postgres.source}"
        if amqp_url is None:
            rabbit, resolved_management = resolve_rabbitmq()
            closers.append(rabbit.close)
            amqp_url, sources[1] = rabbit.url, f"RabbitMQ: {rabbit.source}"
            management_url = management_url or resolved_management
        management_url = management_url or DEFAULT_MANAGEMENT_URL
        _check_loopback(postgres_url, amqp_url, management_url)
        yield postgres_url, amqp_url, management_url, "; ".join(sources)
    finally:
        for close in reversed(closers):
            close()


@contextlib.asynccontextmanager
async def throwaway(
    postgres_url: str, amqp_url: str, management_url: str, prefix: str
) -> AsyncIterator[tuple[str, str]]:
    """A fresh database and vhost: (database URL, AMQP URL); both dropped afterwards."""
    postgres = PostgresServer(postgres_url)
    rabbit = RabbitServer(amqp_url, management_url)
    database = f"{prefix}_{uuid.uuid4().hex[:8]}"
    database_url = await postgres.create(database)
    try:
        vhost = await rabbit.create_vhost()
        try:
            yield database_url, rabbit.url_for(vhost)
        finally:
            await rabbit.delete_vhost(vhost)
    finally:
        await postgres.drop(database)


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from the state field on (the command name may hold spaces)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def tree_cpu_seconds(root: int) -> float:
    """User+system CPU of ``root`` and all its descendants, exited ones included: each live
    process adds its own (utime, stime) and its reaped children's (cutime, cstime)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    ticks, pending = 0, [root]
    while pending:
        pid = pending.pop()
        if (fields := _stat(pid)) is not None:
            ticks += sum(int(value) for value in fields[11:15])
            pending.extend(children.get(pid, []))
    return ticks / _TICKS


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class WorkerProcess:
    """A baseline's worker as a real subprocess in a session of its own, output to a file."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                list(argv),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def cpu_seconds(self) -> float:
        return tree_cpu_seconds(self.process.pid)

    def log_tail(self, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self, timeout_s: float = 20.0) -> None:
        """SIGTERM (a warm shutdown in both libraries); SIGKILL to its group after timeout_s."""
        group = self.process.pid  # start_new_session: the group's id is the worker's pid
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
                self.process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)  # any child that outlived its parent


async def queue_state(amqp_url: str, names: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(ready messages, consumers) of each of these queues that exists (passive declare)."""
    state: dict[str, tuple[int, int]] = {}
    connection = await aio_pika.connect(amqp_url, timeout=10)
    try:
        for name in names:
            channel = await connection.channel()
            try:
                queue = await channel.declare_queue(name, passive=True)
            except aiormq.exceptions.ChannelNotFoundEntity:
                continue  # the 404 closed the channel; the next name opens another
            declared = queue.declaration_result
            state[name] = (declared.message_count or 0, declared.consumer_count or 0)
            await channel.close()
    finally:
        await connection.close()
    return state


async def wait_ready(
    amqp_url: str, queue: str, consumers: int, worker: WorkerProcess, timeout_s: float
) -> None:
    """Until ``consumers`` consumers are on ``queue``: the worker takes jobs."""
    deadline = time.monotonic() + timeout_s
    while True:
        if not worker.alive:
            raise RuntimeError(f"the worker exited before it was ready:\n{worker.log_tail()}")
        found = (await queue_state(amqp_url, [queue])).get(queue, (0, 0))[1]
        if found >= consumers:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{found}/{consumers} consumers on {queue!r} after {timeout_s:.0f} s:\n"
                f"{worker.log_tail()}"
            )
        await asyncio.sleep(0.1)


async def wait_done(
    count_done: Callable[[], Awaitable[int]], n: int, worker: WorkerProcess, deadline: float
) -> float:
    """Poll every 50 ms until ``count_done()`` reaches n: the perf_counter time it did."""
    while True:
        done = await count_done()
        if done >= n:
            return time.perf_counter()
        if not worker.alive:
            raise RuntimeError(f"the worker died with {done}/{n} done:\n{worker.log_tail()}")
        if time.perf_counter() > deadline:
            raise TimeoutError(f"only {done}/{n} jobs done in time:\n{worker.log_tail()}")
        await asyncio.sleep(0.05)


def _executable(name: str) -> list[str]:
    """The library's console script next to this interpreter, else ``python -m name``."""
    found = shutil.which(name, path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", name]


# --- The baselines --------------------------------------------------------------------------


class Baseline(abc.ABC):
    """One library: preparing, its worker, submitting, counting and checking outcomes."""

    name: str
    settings: str
    ready_queue: str
    ready_consumers: int
    queues: tuple[str, ...]  # empty once every job is done

    def __init__(self, amqp_url: str, database_url: str) -> None:
        self.amqp_url = amqp_url
        self.database_url = database_url

    @abc.abstractmethod
    def prepare(self) -> None:
        """Create the tables the outcomes go to, before the worker starts."""

    @abc.abstractmethod
    def worker_argv(self) -> list[str]: ...

    @abc.abstractmethod
    def submit(self, n: int, concurrency: int) -> list[str]:
        """Send n jobs from ``concurrency`` threads; the jobs' ids."""

    @abc.abstractmethod
    async def count_done(self, connection: asyncpg.Connection) -> int: ...

    @abc.abstractmethod
    async def verify(self, connection: asyncpg.Connection, ids: list[str]) -> list[str]:
        """Problems with the outcomes: a job missing, failed, unknown or run twice."""


class CeleryBaseline(Baseline):
    name = "celery"
    settings = (
        f"Celery prefork x{WORKER_PROCESSES}, acks_late, reject_on_worker_lost, confirm_publish, "
        "prefetch multiplier 4, every result in PostgreSQL (SQLAlchemy + psycopg 3)"
    )
    ready_queue = CELERY_QUEUE
    ready_consumers = 1  # the main process consumes for its pool
    queues = (CELERY_QUEUE,)

    def prepare(self) -> None:
        create_celery_tables(celery_backend_url(self.database_url))

    def worker_argv(self) -> list[str]:
        return [
            *_executable("celery"),
            *("-A", "bench_baselines", "worker", "--pool", "prefork"),
            *("--concurrency", str(WORKER_PROCESSES), "--loglevel", "WARNING"),
        ]

    def submit(self, n: int, concurrency: int) -> list[str]:
        client = make_celery_app(
            self.amqp_url, celery_backend_url(self.database_url), pool_limit=concurrency
        )
        task = client.tasks[CELERY_TASK]  # finalizes the app before the threads use it
        try:
            with ThreadPoolExecutor(concurrency, thread_name_prefix="celery-submit") as pool:
                return [str(result.id) for result in pool.map(lambda _: task.delay(), range(n))]
        finally:
            client.close()

    async def count_done(self, connection: asyncpg.Connection) -> int:
        done: int = await connection.fetchval(
            "SELECT count(*) FROM celery_taskmeta WHERE status IN ('SUCCESS', 'FAILURE', 'REVOKED')"
        )
        return done

    async def verify(self, connection: asyncpg.Connection, ids: list[str]) -> list[str]:
        rows = await connection.fetch("SELECT task_id, status FROM celery_taskmeta")
        statuses = Counter(str(row["status"]) for row in rows)
        problems = [
            f"{count} tasks {status}" for status, count in statuses.items() if status != "SUCCESS"
        ]
        succeeded = {str(row["task_id"]) for row in rows if row["status"] == "SUCCESS"}
        if len(set(ids)) != len(ids):
            problems.append(f"{len(ids) - len(set(ids))} task ids handed out twice")
        if missing := set(ids) - succeeded:
            problems.append(f"{len(missing)} submitted tasks without a SUCCESS result")
        if unknown := {str(row["task_id"]) for row in rows} - set(ids):
            problems.append(f"{len(unknown)} results of tasks never submitted")
        return problems


class DramatiqBaseline(Baseline):
    name = "dramatiq"
    settings = (
        f"Dramatiq {WORKER_PROCESSES} processes x {DRAMATIQ_THREADS} threads, confirm_delivery, "
        "ack after the actor, one INSERT per job (autocommit, psycopg 3)"
    )
    ready_queue = DRAMATIQ_QUEUE
    ready_consumers = WORKER_PROCESSES  # each worker process consumes the queue
    # Where a message can still sit: the queue, its delay queue (retries), its dead letters.
    queues = (DRAMATIQ_QUEUE, f"{DRAMATIQ_QUEUE}.DQ", f"{DRAMATIQ_QUEUE}.XQ")

    def prepare(self) -> None:
        with psycopg.connect(self.database_url) as connection:
            connection.execute(CREATE_DONE_TABLE)

    def worker_argv(self) -> list[str]:
        return [
            *_executable("dramatiq"),
            *("bench_baselines", "--processes", str(WORKER_PROCESSES)),
            *("--threads", str(DRAMATIQ_THREADS)),
        ]

    def submit(self, n: int, concurrency: int) -> list[str]:
        broker = make_dramatiq_broker(self.amqp_url)  # a connection per sending thread
        actor = declare_actor(broker)
        try:
            with ThreadPoolExecutor(concurrency, thread_name_prefix="dramatiq-submit") as pool:
                list(pool.map(actor.send, range(n)))
        finally:
            broker.close()
        return [str(i) for i in range(n)]

    async def count_done(self, connection: asyncpg.Connection) -> int:
        done: int = await connection.fetchval("SELECT count(*) FROM bench_done")
        return done

    async def verify(self, connection: asyncpg.Connection, ids: list[str]) -> list[str]:
        rows = await connection.fetch("SELECT job_id, executions FROM bench_done")
        seen = {str(row["job_id"]) for row in rows}
        problems: list[str] = []
        if missing := set(ids) - seen:
            problems.append(f"{len(missing)} jobs never ran")
        if unknown := seen - set(ids):
            problems.append(f"{len(unknown)} rows of jobs never sent")
        if repeats := sum(int(row["executions"]) - 1 for row in rows):
            problems.append(f"{repeats} repeated executions")
        return problems


async def measure(
    kind: type[Baseline],
    n: int,
    concurrency: int,
    services: tuple[str, str, str],
    timeout_s: float,
) -> BaselineReport:
    """One baseline on a fresh database and vhost (``services``: PostgreSQL admin URL, AMQP
    URL, management URL). Raises TimeoutError past ``timeout_s`` from the first submission."""
    async with throwaway(*services, prefix=f"bench_{kind.name}") as (database_url, amqp_url):
        baseline = kind(amqp_url, database_url)
        await asyncio.to_thread(baseline.prepare)
        logs = Path(tempfile.mkdtemp(prefix=f"bench_baselines-{kind.name}-"))
        path = os.pathsep.join(filter(None, [str(SCRIPTS), os.environ.get("PYTHONPATH")]))
        env = {
            **os.environ,
            "PYTHONPATH": path,
            ROLE_ENV: kind.name,
            BROKER_ENV: amqp_url,
            DATABASE_ENV: database_url,
        }
        worker = WorkerProcess(baseline.worker_argv(), env, logs / "worker.log")
        try:
            await wait_ready(amqp_url, kind.ready_queue, kind.ready_consumers, worker, 60.0)
            connection = await asyncpg.connect(database_url)
            try:
                cpu_before, busy_before = worker.cpu_seconds(), machine_busy_seconds()
                own_before = own_cpu_seconds()
                started = time.perf_counter()
                try:
                    submitting = asyncio.to_thread(baseline.submit, n, concurrency)
                    ids = await asyncio.wait_for(submitting, timeout_s)
                except TimeoutError:
                    raise TimeoutError(f"the {n} submissions took over {timeout_s} s") from None
                submitted = time.perf_counter()
                submitter_cpu = own_cpu_seconds() - own_before
                finished = await wait_done(
                    lambda: baseline.count_done(connection), n, worker, started + timeout_s
                )
                cpu_seconds = worker.cpu_seconds() - cpu_before
                machine_seconds = machine_busy_seconds() - busy_before
                problems = await baseline.verify(connection, ids)
            finally:
                await connection.close()
            left = await queue_state(amqp_url, kind.queues)
            problems += [f"{ready} messages left on {q}" for q, (ready, _) in left.items() if ready]
        except BaseException:
            print(f"{kind.name}: worker log kept in {logs}", file=sys.stderr)
            raise
        finally:
            await asyncio.to_thread(worker.stop)
        shutil.rmtree(logs, ignore_errors=True)
    return BaselineReport(
        name=kind.name,
        n=n,
        accepted_per_s=n / (submitted - started),
        end_to_end_per_s=n / (finished - started),
        seconds=finished - started,
        ok=not problems,
        problems=problems,
        cpu_seconds=cpu_seconds,
        submit_seconds=submitted - started,
        submitter_cpu_seconds=submitter_cpu,
        machine_cpu_seconds=machine_seconds,
        settings=kind.settings,
    )


async def _run(
    kind: type[Baseline],
    n: int,
    concurrency: int,
    postgres_url: str | None,
    amqp_url: str | None,
    management_url: str | None,
    timeout_s: float,
) -> BaselineReport:
    with resolved_services(postgres_url, amqp_url, management_url) as (pg, amqp, management, _):
        return await measure(kind, n, concurrency, (pg, amqp, management), timeout_s)


async def run_celery_async(
    n: int,
    concurrency: int,
    *,
    postgres_url: str | None = None,
    amqp_url: str | None = None,
    management_url: str | None = None,
    timeout_s: float = 300.0,
) -> BaselineReport:
    """The Celery baseline. ``postgres_url`` is an admin URL (any database); URLs left out
    are resolved as the tests do. The run creates and drops its own database and vhost.
    Raises TimeoutError if the jobs are not all done within ``timeout_s`` of the first
    submission, RuntimeError if the worker dies."""
    return await _run(
        CeleryBaseline, n, concurrency, postgres_url, amqp_url, management_url, timeout_s
    )


async def run_dramatiq_async(
    n: int,
    concurrency: int,
    *,
    postgres_url: str | None = None,
    amqp_url: str | None = None,
    management_url: str | None = None,
    timeout_s: float = 300.0,
) -> BaselineReport:
    """The Dramatiq baseline; arguments and failures as :func:`run_celery_async`."""
    return await _run(
        DramatiqBaseline, n, concurrency, postgres_url, amqp_url, management_url, timeout_s
    )


def run_celery(
    n: int,
    concurrency: int,
    *,
    postgres_url: str | None = None,
    amqp_url: str | None = None,
    management_url: str | None = None,
    timeout_s: float = 300.0,
) -> BaselineReport:
    """:func:`run_celery_async` for synchronous code (inside an event loop: the async one)."""
    return asyncio.run(
        run_celery_async(
            n,
            concurrency,
            postgres_url=postgres_url,
            amqp_url=amqp_url,
            management_url=management_url,
            timeout_s=timeout_s,
        )
    )


def run_dramatiq(
    n: int,
    concurrency: int,
    *,
    postgres_url: str | None = None,
    amqp_url: str | None = None,
    management_url: str | None = None,
    timeout_s: float = 300.0,
) -> BaselineReport:
    """:func:`run_dramatiq_async` for synchronous code (inside an event loop: the async one)."""
    return asyncio.run(
        run_dramatiq_async(
            n,
            concurrency,
            postgres_url=postgres_url,
            amqp_url=amqp_url,
            management_url=management_url,
            timeout_s=timeout_s,
        )
    )


# --- The command line -----------------------------------------------------------------------


def print_table(reports: list[BaselineReport]) -> None:
    print(
        f"{'baseline':9s} {'n':>5s} {'accepted/s':>10s} {'end-to-end/s':>12s} {'seconds':>7s} "
        f"{'worker CPU s':>12s} {'CPU s/1k jobs':>13s} {'machine CPU s':>13s}  ok"
    )
    for r in reports:
        print(
            f"{r['name']:9s} {r['n']:5d} {r['accepted_per_s']:10.0f} "
            f"{r['end_to_end_per_s']:12.0f} {r['seconds']:7.2f} {r['cpu_seconds']:12.2f} "
            f"{1000 * r['cpu_seconds'] / r['n']:13.2f} {r['machine_cpu_seconds']:13.2f}  "
            f"{'yes' if r['ok'] else 'NO'}"
        )
    for r in reports:
        print(f"  {r['name']}: {r['settings']}")
        print(
            f"  {r['name']}: submitting took {r['submit_seconds']:.2f} s and "
            f"{r['submitter_cpu_seconds']:.2f} CPU s in the benchmark process"
        )
        for problem in r["problems"]:
            print(f"  {r['name']} PROBLEM: {problem}")


async def _main(args: argparse.Namespace) -> int:
    kinds: dict[str, type[Baseline]] = {"celery": CeleryBaseline, "dramatiq": DramatiqBaseline}
    reports: list[BaselineReport] = []
    failed = False
    with resolved_services(args.postgres_url, args.amqp_url, args.management_url) as resolved:
        postgres_url, amqp_url, management_url, sources = resolved
        services = (postgres_url, amqp_url, management_url)
        print(f"{sources}; n={args.n}, {args.concurrency} submitting threads", flush=True)
        for name in args.only or list(kinds):
            try:
                report = await measure(
                    kinds[name], args.n, args.concurrency, services, args.timeout
                )
            except Exception as exc:
                print(f"{name} FAILED: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                failed = True
                continue
            reports.append(report)
            failed = failed or not report["ok"]
    print()
    print_table(reports)
    if args.json:
        print(json.dumps(reports, indent=2))
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description="Celery and Dramatiq baselines, noop jobs.")
    parser.add_argument("--n", type=int, default=2000, help="jobs per baseline")
    parser.add_argument("--concurrency", type=int, default=64, help="submitting threads")
    parser.add_argument("--only", action="append", choices=["celery", "dramatiq"])
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per baseline")
    parser.add_argument("--postgres-url", help="admin URL; default: resolved as the tests do")
    parser.add_argument("--amqp-url", help="default: resolved as the tests do")
    parser.add_argument("--management-url", help="RabbitMQ management API base URL")
    parser.add_argument("--json", action="store_true", help="also print the reports as JSON")
    sys.exit(asyncio.run(_main(parser.parse_args())))


if __name__ == "__main__":
    main()
