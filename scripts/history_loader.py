"""A store with history, loaded for the benchmarks: finished jobs in PostgreSQL (set-based SQL,
one attempt, three timeline events, a dead letter per dead job, log lines for some) and
published submissions in MongoDB, shaped as the services write them.

Used by ``bench_retention.py`` (a scratch database, finish times over 30 days, pruned) and by
``bench_pipeline.py`` / ``bench_history.py`` (a running stack's own stores, finish times
inside the retention windows so the scheduler's sweep keeps them: the benches then measure a
platform that has served a week, not a fresh one).

Job ``n`` (1 = newest) finishes ``newest + span * n / jobs`` ago; its owner is
``owners[n % len(owners)]``, its type and priority rotate independently of the owner (every
owner has every type and priority), its status, an open dead letter, log lines and its project
(one of ``projects``, about ``jobs / len(projects)`` each) are drawn from hashes of ``n``
(repeatable, no correlation with owner, type or each other). Without ``projects`` a job goes
to its owner's personal default project (the job store's insert trigger, migration 0013); a
dead letter belongs to its job's project, and its submission in MongoDB carries the job's.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.errors import BulkWriteError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.jobstore import ROLLUPS
from jobs_scheduler.adapters import rollups
from jobs_submission.adapters.mongo import COLLECTION
from jobs_submission.domain.documents import OUTBOX_SENT, STATUS_PUBLISHED, new_document
from jobs_submission.domain.requests import JobRequest
from jobs_submission.domain.times import to_ms

TABLES = ("jobs", "job_attempts", "job_events", "job_logs", "dead_letters")

# A 1x1 PNG: image_resize's payload, kept small (real ones carry up to 5 MB).
TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)

# Per job type: the payload as stored (validated, defaults filled), a succeeded job's result,
# a dead job's error, and the handler's first log line.
KINDS: dict[str, dict[str, Any]] = {
    "simulate": {
        "payload": {
            "seed": None,
            "maxSeconds": 2.0,
            "minSeconds": 0.0,
            "failureRate": 0.1,
            "immediateFailureRate": 0.05,
        },
        "result": {"durationSeconds": 0.84},
        "error_class": "SimulatedFailure",
        "error": "simulated immediate failure",
        "log": "sleeping 0.840 s",
    },
    "email": {
        "payload": {"to": "someone@example.com", "subject": "Your report", "body": "Hello!"},
        "result": {
            "messageId": "<history@jobs.local>",
            "to": "someone@example.com",
            "acceptedAt": "2026-12-01T00:00:00+00:00",
        },
        "error_class": "ConnectionRefusedError",
        "error": "[Errno 111] Connection refused",
        "log": "connecting to smtp 127.0.0.1:1025",
    },
    "report_generation": {
        "payload": {"to": None, "from": None, "format": "csv", "reportType": "jobs_summary"},
        "result": {"format": "csv", "artifact": "reports/history.csv", "bytes": 399},
        "error_class": "OperationalError",
        "error": "connection was closed in the middle of operation",
        "log": "reading your jobs created in [-, -)",
    },
    "image_resize": {
        "payload": {"imageBase64": TINY_PNG, "width": 64, "height": 64, "format": "png"},
        "result": {"artifact": "images/history.png", "width": 64, "height": 64},
        "error_class": "UnidentifiedImageError",
        "error": "cannot identify image file",
        "log": "resizing 1x1 png to 64x64",
    },
}
RETRY_POLICY = {
    "jitter": True,
    "strategy": "exponential",
    "multiplier": 2.0,
    "max_delay_ms": 60000,
    "base_delay_ms": 1000,
}


@dataclass(frozen=True)
class History:
    """What to load into the job store (the module's docstring says how it is spread)."""

    jobs: int
    span: timedelta
    newest: timedelta = timedelta(0)
    owners: tuple[str, ...] = tuple(f"user{i}@test.com" for i in range(50))
    types: tuple[str, ...] = ("email",)
    priorities: tuple[int, ...] = (2,)
    dead_share: float = 0.25
    cancelled_share: float = 0.10
    open_letter_share: float = 0.0  # of the dead jobs: letters nobody resolved yet
    logged_share: float = 0.0  # jobs with two log lines
    workers: tuple[str, ...] = ("history-worker-1", "history-worker-2")
    # Project ids the jobs are spread over; none: each owner's personal default project.
    projects: tuple[str, ...] = ()

    def describe(self) -> str:
        spread = f"{len(self.projects)} projects" if self.projects else "personal projects"
        return (
            f"{self.jobs:,} finished jobs ({len(self.types)} types, {len(self.priorities)} "
            f"priorities, {len(self.owners)} owners, {spread}; {self.dead_share:.0%} dead, "
            f"{self.cancelled_share:.0%} cancelled, the rest succeeded), finished between "
            f"{_days(self.newest)} and {_days(self.newest + self.span)} ago"
        )


def _days(age: timedelta) -> str:
    if age < timedelta(hours=1):
        return f"{age.total_seconds() / 60:.0f} min"
    return f"{age.total_seconds() / 86400:.1f} days"


def bench_history(jobs: int, owners: Sequence[str], projects: Sequence[str] = ()) -> History:
    """The benches' history: four types, three priorities, ``owners``, spread over
    ``projects`` (none: the owners' personal projects); finished 10 minutes to 5 days ago,
    inside every retention window (succeeded and cancelled 7 days, dead 30), so the
    scheduler's sweep keeps all of it; 4 % dead (letters resolved, one in fifty still open),
    2 % cancelled, one job in ten with log lines."""
    return History(
        jobs=jobs,
        span=timedelta(days=5),
        newest=timedelta(minutes=10),
        owners=tuple(owners),
        types=tuple(KINDS),
        priorities=(1, 2, 3),
        dead_share=0.04,
        cancelled_share=0.02,
        open_letter_share=0.02,
        logged_share=0.10,
        projects=tuple(projects),
    )


# Every value of a job computed once into a temporary table, then copied into each table.
# hashint4 of n gives repeatable uniform draws in [0, 1) (status, open letter, logs, times,
# project). No projects: project_id NULL, which the jobs' insert trigger turns into the owner's
# personal default project (an empty array's element is NULL; the modulo never divides by 0).
STAGE = """
CREATE TEMP TABLE history ON COMMIT DROP AS
SELECT gen_random_uuid() AS id, h.n, k.type, k.payload, k.result, k.error_class, k.error,
       k.log, h.owner, h.priority, h.open_letter, h.logged, h.trace_id, h.project_id,
       (CAST(:workers AS text[]))[1 + h.n % cardinality(CAST(:workers AS text[]))]
           AS worker_id,
       CASE WHEN h.r_status < CAST(:dead AS float8) THEN 'dead'
            WHEN h.r_status < CAST(:dead AS float8) + CAST(:cancelled AS float8) THEN 'cancelled'
            ELSE 'succeeded' END AS status,
       h.finished - h.run - h.wait AS created_at,
       h.finished - h.run - h.wait + interval '8 ms' AS queued_at,
       h.finished - h.run AS started_at,
       h.finished AS finished_at,
       (extract(epoch FROM h.run) * 1000)::bigint AS duration_ms
FROM (
    SELECT n,
           (CAST(:owners AS text[]))[1 + n % :owner_count] AS owner,
           (CAST(:priorities AS int[]))[1 + (n / (:owner_count * :type_count)) % :priority_count]
               AS priority,
           (n / :owner_count) % :type_count AS kind,
           (hashint4(n) & 1048575) / 1048576.0::float8 AS r_status,
           (hashint4(n # 1431655765) & 1048575) / 1048576.0::float8
               < CAST(:open_letters AS float8) AS open_letter,
           (hashint4(-n) & 1048575) / 1048576.0::float8 < CAST(:logged AS float8) AS logged,
           (CAST(:projects AS uuid[]))[1 + (hashint4(n * 31 + 7) & 1048575)
                                           % greatest(:project_count, 1)] AS project_id,
           md5(n::text || CAST(:salt AS text)) AS trace_id,
           now() - CAST(:newest AS interval) - CAST(:span AS interval) * (n::float8 / :jobs)
               AS finished,
           interval '1 ms' * (hashint4(n * 7) & 1023) AS run,
           interval '1 ms' * (20 + (hashint4(n * 13) & 127)) AS wait
    FROM generate_series(1, :jobs) AS n
) AS h
JOIN jsonb_to_recordset(CAST(:kinds AS jsonb))
     AS k(idx int, type text, payload jsonb, result jsonb, error_class text, error text,
          log text)
  ON k.idx = h.kind
"""
LOAD_JOBS = """
INSERT INTO jobs (id, type, priority, payload, submitted_by, project_id, status, attempt,
                  max_attempts, attempt_limit, timeout_seconds, queue, worker_id, last_error,
                  last_error_class, result, retry_policy, trace_id, queued_at,
                  cancel_requested_at, cancel_requested_by, created_at, updated_at,
                  started_at, finished_at)
SELECT id, type, priority, payload, owner, project_id, status, 1,
       CASE WHEN status = 'dead' THEN 1 ELSE 3 END, CASE WHEN status = 'dead' THEN 1 ELSE 3 END,
       300, 'default', CASE WHEN status <> 'dead' THEN worker_id END,
       CASE WHEN status = 'dead' THEN error END, CASE WHEN status = 'dead' THEN error_class END,
       CASE WHEN status = 'succeeded' THEN result END, CAST(:retry_policy AS jsonb), trace_id,
       queued_at, CASE WHEN status = 'cancelled' THEN finished_at - interval '20 ms' END,
       CASE WHEN status = 'cancelled' THEN owner END, created_at, finished_at,
       CASE WHEN status <> 'dead' THEN started_at END, finished_at
FROM history
"""
LOAD_ATTEMPTS = """
INSERT INTO job_attempts (job_id, attempt, status, worker_id, dispatched_at, started_at,
                          finished_at, duration_ms, error_class, error)
SELECT id, 1, CASE status WHEN 'dead' THEN 'failed' ELSE status END, worker_id, queued_at,
       started_at, finished_at, duration_ms, CASE WHEN status = 'dead' THEN error_class END,
       CASE WHEN status = 'dead' THEN error END
FROM history
"""
LOAD_EVENTS = """
INSERT INTO job_events (job_id, attempt, from_status, to_status, reason, at)
SELECT h.id, 1, step.from_status, step.to_status, step.reason, step.at
FROM history AS h, LATERAL (VALUES
    (NULL, 'queued', 'dispatched', h.queued_at),
    ('queued', CASE WHEN h.status = 'dead' THEN 'failed' ELSE 'running' END,
     CASE WHEN h.status = 'dead' THEN 'retryable: ' || h.error_class
          ELSE 'started on ' || h.worker_id END, h.started_at),
    (CASE WHEN h.status = 'dead' THEN 'failed' ELSE 'running' END, h.status,
     CASE h.status WHEN 'dead' THEN 'max_attempts' WHEN 'cancelled' THEN 'cancelled by ' || h.owner
          ELSE 'succeeded' END, h.finished_at)
) AS step(from_status, to_status, reason, at)
"""
LOAD_LETTERS = """
INSERT INTO dead_letters (id, job_id, attempt, reason, last_error, last_error_class,
                          payload_snapshot, fingerprint, created_at, resolved_at, resolved_by,
                          resolution)
SELECT gen_random_uuid(), id, 1, 'max_attempts', error, error_class,
       jsonb_build_object('type', type, 'payload', payload, 'priority', priority,
                          'submittedBy', owner),
       error_class || ': ' || error, finished_at,
       CASE WHEN NOT open_letter THEN least(finished_at + interval '1 hour', now()) END,
       CASE WHEN NOT open_letter THEN 'admin@test.com' END,
       CASE WHEN NOT open_letter THEN 'discarded' END
FROM history WHERE status = 'dead'
"""
LOAD_LOGS = """
INSERT INTO job_logs (job_id, attempt, worker_id, level, message, at, message_id)
SELECT h.id, 1, h.worker_id, line.level, line.message, line.at, gen_random_uuid()
FROM history AS h, LATERAL (VALUES
    ('info', h.log, h.started_at),
    (CASE WHEN h.status = 'dead' THEN 'warning' ELSE 'info' END,
     CASE h.status WHEN 'dead' THEN 'handler failed: ' || h.error_class || ': ' || h.error
          WHEN 'cancelled' THEN 'attempt cancelled: cancelled' ELSE 'done' END, h.finished_at)
) AS line(level, message, at)
WHERE h.logged
"""


async def load_jobs(connection: AsyncConnection, history: History) -> dict[str, int]:
    """Insert ``history`` in the caller's transaction; the rows added per table."""
    kinds = [{"idx": i, "type": t, **KINDS[t]} for i, t in enumerate(history.types)]
    await connection.execute(
        text(STAGE),
        {
            "jobs": history.jobs,
            "span": history.span,
            "newest": history.newest,
            "owners": list(history.owners),
            "owner_count": len(history.owners),
            "priorities": list(history.priorities),
            "priority_count": len(history.priorities),
            "type_count": len(history.types),
            "kinds": json.dumps(kinds),
            "workers": list(history.workers),
            "dead": history.dead_share,
            "cancelled": history.cancelled_share,
            "open_letters": history.open_letter_share,
            "logged": history.logged_share,
            "projects": list(history.projects),
            "project_count": len(history.projects),
            "salt": uuid.uuid4().hex,  # trace ids differ between loads
        },
    )
    added: dict[str, int] = {}
    for table, statement, values in (
        ("jobs", LOAD_JOBS, {"retry_policy": json.dumps(RETRY_POLICY)}),
        ("job_attempts", LOAD_ATTEMPTS, {}),
        ("job_events", LOAD_EVENTS, {}),
        ("dead_letters", LOAD_LETTERS, {}),
        ("job_logs", LOAD_LOGS, {}),
    ):
        result = await connection.execute(text(statement), values)
        added[table] = result.rowcount
    return added


# The newest loaded jobs, from the load's temporary table (the caller's transaction still open:
# the table goes at its commit).
NEWEST_JOBS = """
SELECT id, type, priority, payload, owner AS submitted_by, project_id, trace_id, created_at,
       queued_at
FROM history ORDER BY n LIMIT :limit
"""


async def newest_loaded(connection: AsyncConnection, limit: int) -> list[Any]:
    """The newest ``limit`` jobs :func:`load_jobs` loaded, in its transaction."""
    return list((await connection.execute(text(NEWEST_JOBS), {"limit": limit})).all())


async def vacuum_analyze(
    engine: AsyncEngine, tables: Sequence[str] = TABLES, *, checkpoint: bool = False
) -> None:
    """What autovacuum would have done to a store that grew over days: visibility map set,
    statistics current (the planner's estimates for the reads). ``checkpoint``: then write
    the load's dirty pages out now, not during what is measured next (needs a superuser)."""
    async with engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        for table in tables:
            await connection.execute(text(f"VACUUM ANALYZE {table}"))
        if checkpoint:
            await connection.execute(text("CHECKPOINT"))


async def rebuild_rollups(engine: AsyncEngine) -> float:
    """Recount the analytics rollups from the loaded jobs (the scheduler's ``rebuild_rollups``:
    the grain tables written from ``jobs``, the deltas emptied); the seconds it took. The
    load's own statements went through the triggers too, so this is the documented step after
    a bulk load rather than a necessity here."""
    started = time.perf_counter()
    async with engine.begin() as connection:
        await rollups.rebuild_rollups(connection)
    return time.perf_counter() - started


async def unfolded_deltas(engine: AsyncEngine) -> int:
    """Rollup deltas the scheduler has not folded yet."""
    tables = [family["delta"].name for family in ROLLUPS.values()]
    counts = " + ".join(f"(SELECT count(*) FROM {table})" for table in tables)
    async with engine.connect() as connection:
        return int(await connection.scalar(text(f"SELECT {counts}")) or 0)


async def wait_until_folded(engine: AsyncEngine, *, below: int, timeout: float) -> float:
    """Wait until the running scheduler has folded the rollup deltas down to ``below`` (a
    store that has served for days reads folded rollups, not a recount's backlog); seconds
    waited."""
    started = time.perf_counter()
    while (left := await unfolded_deltas(engine)) >= below:
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"{left:,} rollup deltas still unfolded after {timeout:.0f} s")
        await asyncio.sleep(1.0)
    return time.perf_counter() - started


@dataclass
class Loaded:
    """What a load added, and how long each part took (seconds)."""

    rows: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def report(self) -> str:
        rows = ", ".join(f"{table} {count:,}" for table, count in self.rows.items())
        took = ", ".join(f"{part} {s:.0f} s" for part, s in self.seconds.items())
        return f"  loaded: {rows}\n  took: {took}"


async def load_job_store(
    engine: AsyncEngine, history: History, loaded: Loaded, *, newest: int = 0
) -> list[Any]:
    """The history in one transaction, the rollups recounted, then VACUUM ANALYZE of the job
    and rollup tables (the planner's statistics as a store that grew over days has them) and
    a CHECKPOINT; the ``newest`` jobs loaded (for :func:`load_submissions`)."""
    started = time.perf_counter()
    async with engine.begin() as connection:
        loaded.rows.update(await load_jobs(connection, history))
        rows = await newest_loaded(connection, newest) if newest else []
    loaded.seconds["PostgreSQL insert"] = time.perf_counter() - started
    loaded.seconds["rollups recount"] = await rebuild_rollups(engine)
    started = time.perf_counter()
    rollup_tables = [table.name for tables in ROLLUPS.values() for table in tables.values()]
    await vacuum_analyze(engine, [*TABLES, *rollup_tables], checkpoint=True)
    loaded.seconds["VACUUM ANALYZE, CHECKPOINT"] = time.perf_counter() - started
    return rows


def submission_document(row: Any) -> dict[str, Any]:
    """The submission the service stored for job ``row`` and marked sent once the broker
    confirmed its publish (``SubmissionStore.mark_sent``); in the job's project (none: its
    owner's personal default project, as the job store's trigger gave the job)."""
    request = JobRequest(
        job_type=row.type,
        priority=row.priority,
        submitted_by=row.submitted_by,
        payload=row.payload,
        max_attempts=None,
        timeout_seconds=None,
        project_id=None if row.project_id is None else str(row.project_id),
    )
    document = new_document(
        request,
        job_id=str(row.id),
        idempotency_key=None,
        trace_id=row.trace_id,
        now=row.created_at,
    )
    document["outbox"].update(state=OUTBOX_SENT, attempts=1)
    document["status"] = STATUS_PUBLISHED
    document["publishedAtMs"] = to_ms(row.queued_at)
    document["publishedAt"] = row.queued_at
    return document


async def load_submissions(
    rows: Sequence[Any],
    mongo_url: str,
    database: str,
    loaded: Loaded,
    *,
    batch: int = 2_000,
) -> None:
    """The submissions of the jobs ``rows`` (:func:`load_job_store`'s newest: ids, owners,
    payloads and times as in PostgreSQL), published, into the submission service's collection
    with ``insert_many`` through PyMongo's async API, ``batch`` documents a call."""
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        mongo_url, tz_aware=True, uuidRepresentation="standard"
    )
    started = time.perf_counter()
    try:
        collection = client[database][COLLECTION]
        for start in range(0, len(rows), batch):
            documents = [submission_document(row) for row in rows[start : start + batch]]
            try:
                await collection.insert_many(documents, ordered=False)
            except BulkWriteError as exc:  # its message holds every document
                errors = exc.details.get("writeErrors", [])
                first = errors[0].get("errmsg") if errors else exc.details
                raise RuntimeError(
                    f"{len(errors)} submissions refused, the first: {first}"
                ) from None
    finally:
        await client.close()
    loaded.rows["submissions (MongoDB)"] = len(rows)
    loaded.seconds["MongoDB insert"] = time.perf_counter() - started
