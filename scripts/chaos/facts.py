"""What the job store, the broker and the SMTP sink say about a round's jobs.

A *run* is one execution of a handler. It is counted from the handler's own first log line
(``job_logs``: ``sleeping``/``failing at once`` for simulate, ``connecting to smtp`` for
email), which names the attempt and the worker, or from the attempts that ran (started, or
reported an outcome), whichever is more: a handler that ran twice under one attempt (a
redelivery) shows as two lines.

In a ``flow-control`` round the limited queue's running jobs are also sampled from the job
store through the round (``sample_running``, every 50 ms), so ``limit`` can judge them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from jobs_testing.plugin import SmtpSink

from .faults import worker_pid

TERMINAL = ("succeeded", "dead", "cancelled")
RUN_MARKERS = ("sleeping ", "failing at once", "connecting to smtp")
SUCCESS_LINE = "worked "  # simulate: "worked %.3f s, succeeded"
REPORTED = frozenset({"succeeded", "failed", "timed_out"})
SAMPLE_EVERY = 0.05  # seconds between two samples of a limited queue's running jobs


@dataclass(frozen=True)
class Attempt:
    number: int
    status: str
    worker_id: str | None
    started_at: datetime | None
    finished_at: datetime | None
    error_class: str | None
    error: str | None

    @property
    def worker_pid(self) -> int | None:
        return worker_pid(self.worker_id)

    @property
    def ran(self) -> bool:
        """Its handler ran: it started, or its worker reported an outcome (a quick attempt
        reports only its result)."""
        return self.started_at is not None or self.status in REPORTED

    @property
    def own_failure(self) -> bool:
        """Failed by its handler (not stopped by the platform: lost, expired, cancelled)."""
        return self.status == "failed" and self.error_class != "Cancelled"


@dataclass(frozen=True)
class Run:
    attempt: int
    worker_id: str
    at: datetime


@dataclass
class JobFacts:
    id: str
    type: str
    status: str
    attempt: int
    max_attempts: int
    result: dict[str, Any] | None
    last_error: str | None
    last_error_class: str | None
    lost_count: int
    worker_id: str | None
    schedule_id: str | None
    created_at: datetime
    finished_at: datetime | None
    cancel_requested: bool
    dead_reason: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    success_lines: dict[int, list[str]] = field(default_factory=dict)  # attempt -> lines
    parents: list[str] = field(default_factory=list)
    emails: int = 0  # messages the sink received for this job
    project_id: str = ""
    queue: str = "default"

    @property
    def run_count(self) -> int:
        return max(sum(1 for a in self.attempts if a.ran), len(self.runs))

    @property
    def own_failures(self) -> int:
        return sum(1 for a in self.attempts if a.own_failure)

    def pids(self) -> set[int]:
        """Every worker pid that ran (or announced) an attempt of this job."""
        ids = [a.worker_id for a in self.attempts] + [r.worker_id for r in self.runs]
        return {pid for pid in map(worker_pid, ids) if pid is not None}

    def first_start(self) -> datetime | None:
        """When a handler of this job first started (an attempt, or its own log line)."""
        starts = [a.started_at for a in self.attempts if a.started_at is not None]
        starts += [run.at for run in self.runs]
        return min(starts, default=None)


@dataclass(frozen=True)
class CronFire:
    fire_time: datetime
    job_id: str


@dataclass(frozen=True)
class RunningSample:
    at: datetime  # the database's clock
    job_ids: tuple[str, ...]  # the queue's jobs running then

    @property
    def running(self) -> int:
        return len(self.job_ids)


@dataclass
class LimitedQueue:
    """A project's queue with a ``maxConcurrency``, and its running jobs as sampled."""

    project_id: str
    queue: str
    max_concurrency: int
    samples: list[RunningSample] = field(default_factory=list)
    unanswered: int = 0  # samples the job store did not answer


@dataclass
class RoundFacts:
    jobs: dict[str, JobFacts]
    missing: list[str]  # accepted ids the job store does not have
    owner_jobs: set[str]  # every job of the load's owner created in the round's window
    cron_fires: list[CronFire]
    queues: list[dict[str, Any]]
    api_status: dict[str, str]  # job id -> status the public API shows ("" when not found)
    limited: LimitedQueue | None = None  # flow-control: the limited queue and its samples


async def connect(url: str) -> asyncpg.Connection:
    connection: asyncpg.Connection = await asyncpg.connect(url, timeout=10)
    await connection.set_type_codec(
        "jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
    )
    return connection


async def open_jobs(url: str, ids: list[str]) -> int:
    connection = await connect(url)
    try:
        recorded, terminal = await connection.fetchrow(
            "SELECT count(*), count(*) FILTER (WHERE status = ANY($2::text[])) "
            "FROM jobs WHERE id = ANY($1::uuid[])",
            ids,
            list(TERMINAL),
        )
    finally:
        await connection.close()
    return len(ids) - int(terminal) if recorded else len(ids)


async def wait_terminal(url: str, ids: list[str], timeout: float) -> tuple[bool, float]:
    """Until every job of ``ids`` is recorded and terminal (bounded); (done, seconds)."""
    began = time.monotonic()
    while True:
        try:
            left = await open_jobs(url, ids)
        except (OSError, asyncpg.PostgresError):
            left = len(ids)
        if left == 0:
            return True, time.monotonic() - began
        if time.monotonic() - began > timeout:
            return False, time.monotonic() - began
        await asyncio.sleep(0.5)


async def sample_running(url: str, limited: LimitedQueue, stop: asyncio.Event) -> None:
    """Until ``stop`` is set, every ``SAMPLE_EVERY`` seconds: the limited queue's jobs whose
    status is ``running`` (by the database's clock), appended to ``limited.samples``."""
    connection: asyncpg.Connection | None = None
    try:
        while not stop.is_set():
            try:
                if connection is None:
                    connection = await connect(url)
                rows = await connection.fetch(
                    "SELECT clock_timestamp() AS at, array_agg(id::text) AS ids FROM jobs "
                    "WHERE project_id = $1 AND queue = $2 AND status = 'running'",
                    limited.project_id,
                    limited.queue,
                )
                ids = rows[0]["ids"] or []
                limited.samples.append(RunningSample(rows[0]["at"], tuple(ids)))
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                limited.unanswered += 1
                if connection is not None:
                    with contextlib.suppress(Exception):
                        await connection.close()
                connection = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SAMPLE_EVERY)
    finally:
        if connection is not None:
            await connection.close()


@contextlib.asynccontextmanager
async def sampling(url: str, limited: LimitedQueue | None) -> AsyncIterator[None]:
    """``sample_running`` of ``limited`` (if any) while the block runs."""
    if limited is None:
        yield
        return
    stop = asyncio.Event()
    task = asyncio.create_task(sample_running(url, limited, stop))
    try:
        yield
    finally:
        stop.set()
        await task


async def cron_fires(url: str, schedule_id: str, after: datetime) -> list[CronFire]:
    connection = await connect(url)
    try:
        rows = await connection.fetch(
            "SELECT fire_time, job_id FROM schedule_fires WHERE schedule_id = $1 "
            "AND fire_time > $2 ORDER BY fire_time",
            schedule_id,
            after,
        )
    finally:
        await connection.close()
    return [CronFire(row["fire_time"], str(row["job_id"])) for row in rows]


async def collect(
    url: str,
    ids: list[str],
    *,
    owner: str,
    window: tuple[datetime, datetime],
    sink: SmtpSink,
) -> tuple[dict[str, JobFacts], list[str], set[str]]:
    """Facts of ``ids`` (accepted jobs and cron jobs) and the owner's jobs in ``window``."""
    connection = await connect(url)
    try:
        rows = await connection.fetch(
            "SELECT j.*, (SELECT d.reason FROM dead_letters d WHERE d.job_id = j.id "
            "ORDER BY d.created_at DESC LIMIT 1) AS dead_reason FROM jobs j "
            "WHERE j.id = ANY($1::uuid[])",
            ids,
        )
        attempts = await connection.fetch(
            "SELECT * FROM job_attempts WHERE job_id = ANY($1::uuid[]) ORDER BY job_id, attempt",
            ids,
        )
        lines = await connection.fetch(
            "SELECT job_id, attempt, worker_id, message, at FROM job_logs "
            "WHERE job_id = ANY($1::uuid[]) ORDER BY id",
            ids,
        )
        parents = await connection.fetch(
            "SELECT job_id, depends_on FROM job_dependencies WHERE job_id = ANY($1::uuid[])", ids
        )
        owner_rows = await connection.fetch(
            "SELECT id FROM jobs WHERE submitted_by = $1 AND schedule_id IS NULL "
            "AND created_at >= $2 AND created_at < $3",
            owner,
            *window,
        )
    finally:
        await connection.close()
    jobs: dict[str, JobFacts] = {}
    for row in rows:
        job_id = str(row["id"])
        jobs[job_id] = JobFacts(
            id=job_id,
            type=row["type"],
            status=row["status"],
            attempt=row["attempt"],
            max_attempts=row["max_attempts"],
            result=row["result"],
            last_error=row["last_error"],
            last_error_class=row["last_error_class"],
            lost_count=row["lost_count"],
            worker_id=row["worker_id"],
            schedule_id=str(row["schedule_id"]) if row["schedule_id"] else None,
            created_at=row["created_at"],
            finished_at=row["finished_at"],
            cancel_requested=row["cancel_requested_at"] is not None,
            dead_reason=row["dead_reason"],
            project_id=str(row["project_id"]),
            queue=row["queue"],
        )
    for row in attempts:
        job = jobs.get(str(row["job_id"]))
        if job is not None:
            job.attempts.append(
                Attempt(
                    row["attempt"],
                    row["status"],
                    row["worker_id"],
                    row["started_at"],
                    row["finished_at"],
                    row["error_class"],
                    row["error"],
                )
            )
    for row in lines:
        job = jobs.get(str(row["job_id"]))
        if job is None:
            continue
        message: str = row["message"]
        if message.startswith(RUN_MARKERS):
            job.runs.append(Run(row["attempt"], row["worker_id"], row["at"]))
        elif message.startswith(SUCCESS_LINE):
            job.success_lines.setdefault(row["attempt"], []).append(message)
    for row in parents:
        job = jobs.get(str(row["job_id"]))
        if job is not None:
            job.parents.append(str(row["depends_on"]))
    emails = Counter(str(m.get("X-Job-Id", "")) for m in list(sink.messages))
    for job in jobs.values():
        job.emails = emails.get(job.id, 0)
    missing = [job_id for job_id in ids if job_id not in jobs]
    return jobs, missing, {str(row["id"]) for row in owner_rows}
