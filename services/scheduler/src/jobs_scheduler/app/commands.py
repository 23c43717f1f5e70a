"""Commands people send through the dashboard: retry / requeue a dead job, cancel a job.

Each command's message id is written to ``inbox`` in the transaction of its effect, so a
redelivered command changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Text, cast, func, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import CancelRequested, JobStatus, RetryRequested, utcnow
from jobs_common.dead_letter_commands import RESOLUTION_REQUEUED
from jobs_common.jobstore import dead_letters, jobs
from jobs_common.topology import CANCEL, RETRY
from jobs_scheduler.adapters import attempts
from jobs_scheduler.adapters.inbox import claim_inbox
from jobs_scheduler.adapters.jobs import DISPATCH_COLUMNS, lock_job
from jobs_scheduler.adapters.set_based import json_text
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, Write, apply_transitions
from jobs_scheduler.app.failures import mark_cancelled

S = JobStatus
CANCELLABLE_AT_ONCE = (S.PENDING, S.BLOCKED, S.SCHEDULED, S.QUEUED)


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


@dataclass(frozen=True)
class Requeue:
    """Run dead job ``job_id`` (seen at ``attempt``) again: now, or not before ``not_before``;
    with ``payload`` (JSON text) instead of its own when given."""

    job_id: uuid.UUID
    attempt: int
    reason: str
    requested_by: str
    payload: str | None = None
    not_before: datetime | None = None


async def requeue_dead_jobs(
    connection: AsyncConnection, changes: Changes, requeues: Sequence[Requeue]
) -> set[uuid.UUID]:
    """Move each still dead job to queued (dispatched) or, when its ``not_before`` is still
    ahead, to scheduled; resolve its open dead letters as requeued. Returns the jobs moved
    (a job that is no longer dead at its attempt is left alone)."""
    now = utcnow()
    later: list[Requeue] = []
    at_once: list[Requeue] = []
    for r in requeues:
        (later if r.not_before is not None and r.not_before > now else at_once).append(r)
    moved: set[uuid.UUID] = set()
    if later:
        written = await apply_transitions(
            connection,
            changes,
            [
                Transition(
                    r.job_id,
                    S.DEAD,
                    S.SCHEDULED,
                    f"{r.reason} by {r.requested_by}; not before {r.not_before}",
                    attempt=r.attempt,
                    values={"payload": r.payload, "run_at": r.not_before},
                )
                for r in later
            ],
            REQUEUE_LATER,
        )
        moved |= {job_id for job_id, _ in written}
    if at_once:
        written = await apply_transitions(
            connection,
            changes,
            [
                Transition(
                    r.job_id,
                    S.DEAD,
                    S.QUEUED,
                    f"{r.reason} by {r.requested_by}",
                    attempt=r.attempt,
                    values={"payload": r.payload},
                )
                for r in at_once
            ],
            REQUEUE_NOW,
        )
        for row in written.values():
            changes.dispatch(row, attempt=row.attempt, new_attempt=True)
        moved |= {job_id for job_id, _ in written}
    by_actor: dict[str, list[uuid.UUID]] = {}
    for r in requeues:
        if r.job_id in moved:
            by_actor.setdefault(r.requested_by, []).append(r.job_id)
    for actor, job_ids in by_actor.items():
        await connection.execute(
            update(dead_letters)
            .where(dead_letters.c.job_id.in_(job_ids), dead_letters.c.resolved_at.is_(None))
            .values(resolved_at=func.now(), resolved_by=actor, resolution=RESOLUTION_REQUEUED)
        )
    return moved


async def apply_retry_request(
    connection: AsyncConnection, changes: Changes, message: RetryRequested
) -> bool:
    """Run a dead job again with a fresh attempt budget (optionally with an edited payload,
    optionally not before a given time)."""
    if not await claim_inbox(connection, message.message_id, RETRY):
        return False
    job = await lock_job(connection, message.job_id, None, (S.DEAD.value,))
    if job is None:
        return False
    requeue = Requeue(
        job.id,
        job.attempt,
        message.reason or "manual retry",
        message.requested_by,
        payload=json_text(message.payload),
        not_before=message.not_before,
    )
    return bool(await requeue_dead_jobs(connection, changes, [requeue]))


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
