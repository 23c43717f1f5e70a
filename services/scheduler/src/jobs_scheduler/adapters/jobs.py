"""Job rows: the columns adapters read, locking a row, finishing an attempt's row, and
dispatching a job's next attempt (through the status writer, ``status.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, TypeAlias

from sqlalchemy import and_, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import jobs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, Write, apply_transitions

JobRow: TypeAlias = Row[*tuple[Any, ...]]


# What a dispatch needs of a job row.
DISPATCH_COLUMNS = (
    jobs.c.id,
    jobs.c.type,
    jobs.c.priority,
    jobs.c.payload,
    jobs.c.timeout_seconds,
    jobs.c.trace_id,
    jobs.c.attempt,
    jobs.c.queue,
)

JOB_COLUMNS = (
    jobs.c.id,
    jobs.c.type,
    jobs.c.priority,
    jobs.c.payload,
    jobs.c.submitted_by,
    jobs.c.status,
    jobs.c.attempt,
    jobs.c.max_attempts,
    jobs.c.attempt_limit,
    jobs.c.timeout_seconds,
    jobs.c.queue,
    jobs.c.expired_count,
    jobs.c.lost_count,
    jobs.c.retry_policy,
    jobs.c.worker_id,
    jobs.c.run_at,
    jobs.c.cancel_requested_at,
    jobs.c.cancel_requested_by,
    jobs.c.trace_id,
)


async def lock_job(
    connection: AsyncConnection,
    job_id: uuid.UUID,
    attempt: int | None,
    statuses: Sequence[str],
) -> JobRow | None:
    conditions = [jobs.c.id == job_id, jobs.c.status.in_(statuses)]
    if attempt is not None:
        conditions.append(jobs.c.attempt == attempt)
    query = select(*JOB_COLUMNS).where(and_(*conditions)).with_for_update()
    return (await connection.execute(query)).first()


# ``-> queued`` under the next attempt number, dispatched through the outbox.
NEXT_ATTEMPT = Write(
    "next_attempt",
    sets=lambda r: {"attempt": jobs.c.attempt + 1, "run_at": None},
    returning=DISPATCH_COLUMNS,
)


async def dispatch_next_attempts(
    connection: AsyncConnection, changes: Changes, transitions: Sequence[Transition]
) -> int:
    """Apply ``transitions`` (each ``-> queued``, unfenced) with :data:`NEXT_ATTEMPT` and
    dispatch the attempts, in job id order. Returns how many were dispatched."""
    ordered = sorted(transitions, key=lambda t: t.job_id)
    written = await apply_transitions(connection, changes, ordered, NEXT_ATTEMPT)
    for t in ordered:
        job = written.get(t.key)
        if job is not None:
            changes.dispatch(job, attempt=job.attempt, new_attempt=True)
    return len(written)
