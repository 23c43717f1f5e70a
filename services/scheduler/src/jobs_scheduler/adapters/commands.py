"""Commands people send through the dashboard: retry / requeue a dead job, cancel a job.

Each command's message id is written to ``inbox`` in the transaction of its effect, so a
redelivered command changes nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import DateTime, Text, cast, func, update
from sqlalchemy.dialects.postgresql import JSONB, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import CancelRequested, JobStatus, RetryRequested, utcnow
from jobs_common.jobstore import dead_letters, inbox, jobs
from jobs_common.topology import CANCEL, RETRY
from jobs_scheduler.adapters import attempts
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.failures import mark_cancelled
from jobs_scheduler.adapters.jobs import DISPATCH_COLUMNS, lock_job
from jobs_scheduler.adapters.sql import json_text
from jobs_scheduler.adapters.status import Transition, Write, apply_transitions

S = JobStatus
CANCELLABLE_AT_ONCE = (S.PENDING, S.BLOCKED, S.SCHEDULED, S.QUEUED)


async def claim_inbox(connection: AsyncConnection, message_id: uuid.UUID, queue: str) -> bool:
    """Record a command's message id; False when it was applied before."""
    inserted = await connection.execute(
        insert(inbox)
        .values(message_id=message_id, queue=queue)
        .on_conflict_do_nothing()
        .returning(inbox.c.message_id)
    )
    return inserted.first() is not None


def _requeue_sets(r: Any) -> dict[str, Any]:
    """A dead job runs again: a fresh attempt budget, counts reset, the payload edited or kept."""
    return {
        "attempt_limit": jobs.c.attempt + jobs.c.max_attempts,
        "expired_count": 0,
        "lost_count": 0,
        "finished_at": None,
        "payload": func.coalesce(cast(r.payload, JSONB), jobs.c.payload),
    }


# dead -> queued under the next attempt number.
REQUEUE_NOW = Write(
    "requeue_now",
    columns={"payload": Text()},
    sets=lambda r: _requeue_sets(r) | {"attempt": jobs.c.attempt + 1, "run_at": None},
    returning=DISPATCH_COLUMNS,
)
# dead -> scheduled, not before a given time (bulk requeues trickle in).
REQUEUE_LATER = Write(
    "requeue_later",
    columns={"payload": Text(), "run_at": DateTime(timezone=True)},
    sets=lambda r: _requeue_sets(r) | {"run_at": r.run_at},
)


async def apply_retry_request(
    connection: AsyncConnection, changes: Changes, message: RetryRequested
) -> bool:
    """Run a dead job again with a fresh attempt budget (optionally with an edited payload,
    optionally not before a given time so bulk requeues trickle in)."""
    if not await claim_inbox(connection, message.message_id, RETRY):
        return False
    job = await lock_job(connection, message.job_id, None, (S.DEAD.value,))
    if job is None:
        return False
    why = message.reason or "manual retry"
    payload = json_text(message.payload)
    if message.not_before is not None and message.not_before > utcnow():
        later = Transition(
            job.id,
            S.DEAD,
            S.SCHEDULED,
            f"{why} by {message.requested_by}; not before {message.not_before}",
            attempt=job.attempt,
            values={"payload": payload, "run_at": message.not_before},
        )
        written = await apply_transitions(connection, changes, [later], REQUEUE_LATER)
    else:
        now = Transition(
            job.id,
            S.DEAD,
            S.QUEUED,
            f"{why} by {message.requested_by}",
            attempt=job.attempt,
            values={"payload": payload},
        )
        written = await apply_transitions(connection, changes, [now], REQUEUE_NOW)
        for row in written.values():
            changes.dispatch(row, attempt=row.attempt, new_attempt=True)
    if not written:
        return False
    await connection.execute(
        update(dead_letters)
        .where(dead_letters.c.job_id == job.id, dead_letters.c.resolved_at.is_(None))
        .values(resolved_at=func.now(), resolved_by=message.requested_by, resolution="requeued")
    )
    return True


async def apply_cancel_request(
    connection: AsyncConnection, changes: Changes, message: CancelRequested
) -> str:
    """Cancel at once what has not started; ask the worker to stop what runs."""
    if not await claim_inbox(connection, message.message_id, CANCEL):
        return "duplicate"
    statuses = [s.value for s in (*CANCELLABLE_AT_ONCE, S.RUNNING)]
    job = await lock_job(connection, message.job_id, None, statuses)
    if job is None:
        return "stale"
    await connection.execute(
        update(jobs)
        .where(jobs.c.id == job.id)
        .values(cancel_requested_at=func.now(), cancel_requested_by=message.requested_by)
    )
    if S(job.status) is S.RUNNING:
        changes.cancel_attempt(job.id, job.attempt, "cancelled")
        return "cancel_requested"
    if job.attempt > 0:
        await attempts.cancel_unstarted(connection, job.id, job.attempt)
    await mark_cancelled(
        connection,
        changes,
        job,
        current=S(job.status),
        reason=f"cancelled by {message.requested_by}",
    )
    # A ready message of this job may still be queued: no worker may start it.
    changes.cancel_attempt(job.id, None, "cancelled")
    return "cancelled"
