"""Commands people send through the dashboard: retry / requeue a dead job, cancel a job.

Each command's message id is written to ``inbox`` in the transaction of its effect, so a
redelivered command changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import CancelRequested, JobStatus, RetryRequested, utcnow
from jobs_common.topology import CANCEL, RETRY
from jobs_scheduler.adapters import attempts, dead_letters, job_writes, jobs
from jobs_scheduler.adapters.inbox import claim_inbox
from jobs_scheduler.adapters.set_based import json_text
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.app.failures import mark_cancelled

S = JobStatus
CANCELLABLE_AT_ONCE = (S.PENDING, S.BLOCKED, S.SCHEDULED, S.QUEUED)


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

    def transition(self, now: datetime) -> Transition:
        """``dead -> scheduled`` while ``not_before`` is ahead of ``now``, else ``-> queued``."""
        by = f"{self.reason} by {self.requested_by}"
        if self.not_before is not None and self.not_before > now:
            return Transition(
                self.job_id,
                S.DEAD,
                S.SCHEDULED,
                f"{by}; not before {self.not_before}",
                attempt=self.attempt,
                values={"payload": self.payload, "run_at": self.not_before},
            )
        return Transition(
            self.job_id,
            S.DEAD,
            S.QUEUED,
            by,
            attempt=self.attempt,
            values={"payload": self.payload},
        )


async def requeue_dead_jobs(
    connection: AsyncConnection, changes: Changes, requeues: Sequence[Requeue]
) -> set[uuid.UUID]:
    """Move each still dead job to queued (dispatched) or, when its ``not_before`` is still
    ahead, to scheduled; resolve its open dead letters as requeued. Returns the jobs moved
    (a job that is no longer dead at its attempt is left alone)."""
    now = utcnow()
    moves = [r.transition(now) for r in requeues]
    later = [m for m in moves if m.target is S.SCHEDULED]
    at_once = [m for m in moves if m.target is S.QUEUED]
    moved: set[uuid.UUID] = set()
    if later:
        written = await apply_transitions(connection, changes, later, job_writes.REQUEUE_LATER)
        moved |= {job_id for job_id, _ in written}
    if at_once:
        written = await apply_transitions(connection, changes, at_once, job_writes.REQUEUE_NOW)
        for row in written.values():
            changes.dispatch(row, attempt=row.attempt, new_attempt=True)
        moved |= {job_id for job_id, _ in written}
    by_actor: dict[str, list[uuid.UUID]] = {}
    for r in requeues:
        if r.job_id in moved:
            by_actor.setdefault(r.requested_by, []).append(r.job_id)
    for actor, job_ids in by_actor.items():
        await dead_letters.resolve_requeued(connection, job_ids, actor)
    return moved


async def apply_retry_request(
    connection: AsyncConnection, changes: Changes, message: RetryRequested
) -> bool:
    """Run a dead job again with a fresh attempt budget (optionally with an edited payload,
    optionally not before a given time)."""
    if not await claim_inbox(connection, message.message_id, RETRY):
        return False
    job = await jobs.lock_job(connection, message.job_id, None, (S.DEAD.value,))
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
    job = await jobs.lock_job(connection, message.job_id, None, statuses)
    if job is None:
        return "stale"
    await jobs.record_cancel_request(connection, job.id, message.requested_by)
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
    # A ready message of this job may still be queued: no worker may start it. One still in
    # the outbox (its queue paused) never goes out.
    if S(job.status) is S.QUEUED:
        await jobs.drop_unsent_dispatches(connection, job.id)
    changes.cancel_attempt(job.id, None, "cancelled")
    return "cancelled"
