"""Attempts that started on a worker (``jobs.running``), set-based; a redelivered attempt
is taken over by its new worker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, Integer, Text, bindparam, func, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobRunning, JobStatus
from jobs_common.jobstore import job_attempts, jobs
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.jobs import JobDefaults
from jobs_scheduler.adapters.sql import ArrayRows, interval_seconds, vouched

S = JobStatus

STARTED = ArrayRows(
    "started",
    id=UUID(as_uuid=True),
    attempt=Integer(),
    worker_id=Text(),
    started_at=DateTime(timezone=True),
)
_LEASE = bindparam("lease_seconds", type_=Integer())
_GRACE = bindparam("grace_seconds", type_=Integer())

START_JOBS = (
    update(jobs)
    .where(
        jobs.c.id == STARTED.c.id,
        jobs.c.attempt == STARTED.c.attempt,
        jobs.c.status == S.QUEUED.value,
    )
    .values(
        status=S.RUNNING.value,
        worker_id=STARTED.c.worker_id,
        started_at=STARTED.c.started_at,
        lease_expires_at=vouched(STARTED.c.started_at) + interval_seconds(_LEASE),
        deadline_at=vouched(STARTED.c.started_at)
        + interval_seconds(jobs.c.timeout_seconds + _GRACE),
        updated_at=func.now(),
    )
    .returning(jobs.c.id, jobs.c.attempt)
)

START_ATTEMPTS = (
    update(job_attempts)
    .where(
        job_attempts.c.job_id == STARTED.c.id,
        job_attempts.c.attempt == STARTED.c.attempt,
    )
    .values(status="running", worker_id=STARTED.c.worker_id, started_at=STARTED.c.started_at)
)


def _started(messages: Sequence[JobRunning]) -> dict[str, Any]:
    return STARTED.params((m.job_id, m.attempt, m.worker_id, m.started_at) for m in messages)


async def apply_running(
    connection: AsyncConnection,
    changes: Changes,
    messages: Sequence[JobRunning],
    defaults: JobDefaults,
) -> list[bool]:
    """Attempts that started on a worker, set-based: one UPDATE of the jobs, one of their
    attempt rows. A redelivered attempt that already runs elsewhere is taken over; anything
    else matching no queued attempt is stale. Returns, per message, whether it applied."""
    firsts: dict[tuple[Any, int], JobRunning] = {}
    later: list[JobRunning] = []  # more messages for an attempt seen earlier in the batch
    for message in messages:
        key = (message.job_id, message.attempt)
        if key in firsts:
            later.append(message)
        else:
            firsts[key] = message
    unique = list(firsts.values())
    started = {
        (row.id, row.attempt)
        for row in await connection.execute(
            START_JOBS,
            _started(unique)
            | {
                "lease_seconds": defaults.lease_seconds,
                "grace_seconds": defaults.timeout_grace_seconds,
            },
        )
    }
    applied: list[JobRunning] = []
    for message in sorted(unique, key=lambda m: m.job_id):
        if (message.job_id, message.attempt) in started:
            changes.move(
                message.job_id,
                message.attempt,
                S.QUEUED,
                S.RUNNING,
                f"started on {message.worker_id}",
            )
            applied.append(message)
        elif await _taken_over(connection, changes, message, defaults):
            applied.append(message)
    for message in later:
        if await _taken_over(connection, changes, message, defaults):
            applied.append(message)
    if applied:
        # The last applied message of an attempt names its current worker.
        await connection.execute(
            START_ATTEMPTS, _started(list({(m.job_id, m.attempt): m for m in applied}.values()))
        )
    applied_ids = {id(m) for m in applied}
    return [id(m) in applied_ids for m in messages]


async def _taken_over(
    connection: AsyncConnection, changes: Changes, message: JobRunning, defaults: JobDefaults
) -> bool:
    if not message.redelivered or not await _take_over(connection, message, defaults):
        return False
    changes.move(
        message.job_id,
        message.attempt,
        S.RUNNING,
        S.RUNNING,
        f"redelivered; taken over by {message.worker_id}",
    )
    return True


async def _take_over(
    connection: AsyncConnection, message: JobRunning, defaults: JobDefaults
) -> bool:
    """The broker redelivered a running attempt: its worker's connection died. The new
    worker continues the same attempt, under a fresh lease."""
    taken = await connection.execute(
        update(jobs)
        .where(
            jobs.c.id == message.job_id,
            jobs.c.attempt == message.attempt,
            jobs.c.status == S.RUNNING.value,
            jobs.c.worker_id != message.worker_id,
            jobs.c.cancel_requested_at.is_(None),
        )
        .values(
            worker_id=message.worker_id,
            lease_expires_at=vouched(message.started_at) + interval_seconds(defaults.lease_seconds),
            updated_at=func.now(),
        )
        .returning(jobs.c.id)
    )
    return taken.first() is not None
