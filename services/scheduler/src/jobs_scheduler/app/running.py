"""Attempts that started on a worker (``jobs.running``), set-based; a redelivered attempt
is a claim (``app/claims.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobRunning, JobStatus
from jobs_scheduler.adapters import attempts, job_writes
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.app.claims import answer_claims
from jobs_scheduler.domain.defaults import JobDefaults

S = JobStatus


def _count_started(changes: Changes, started: dict[Any, Any], starts: Sequence[Any]) -> list[Any]:
    """The starts whose ``queued -> running`` was written, each counted for the queue-wait
    metric (``changes.attempt_started``)."""
    applied = [s for s in starts if (s.job_id, s.attempt) in started]
    for s in applied:
        row = started[(s.job_id, s.attempt)]
        changes.attempt_started(
            job_type=row.type,
            priority=row.priority,
            queued_at=row.queued_at,
            started_at=s.started_at,
        )
    return applied


def _move(message: JobRunning, current: JobStatus, reason: str) -> Transition:
    return Transition(
        message.job_id,
        current,
        S.RUNNING,
        reason,
        attempt=message.attempt,
        values={"worker_id": message.worker_id, "started_at": message.started_at},
    )


async def apply_running(
    connection: AsyncConnection,
    changes: Changes,
    messages: Sequence[JobRunning],
    defaults: JobDefaults,
) -> list[bool]:
    """Attempts that started on a worker, set-based: one UPDATE of the jobs, one of their
    attempt rows; anything matching no queued attempt is stale. A redelivered attempt is a
    claim, answered by ``app/claims.py`` (the last claim of an attempt in the batch counts:
    the earlier ones are repeats of it). Returns, per message, whether it applied."""
    starts: dict[tuple[Any, int], JobRunning] = {}
    claims: dict[tuple[Any, int], JobRunning] = {}
    for message in messages:
        key = (message.job_id, message.attempt)
        if message.redelivered:
            claims[key] = message
        else:
            starts.setdefault(key, message)
    unique = sorted(starts.values(), key=lambda m: m.job_id)
    params = job_writes.lease_params(defaults)
    started = await apply_transitions(
        connection,
        changes,
        [_move(m, S.QUEUED, f"started on {m.worker_id}") for m in unique],
        job_writes.START,
        params,
    )
    applied: list[JobRunning] = _count_started(changes, started, unique)
    applied += await answer_claims(connection, changes, list(claims.values()), defaults)
    if applied:
        # The last applied message of an attempt names its current worker.
        await attempts.start(connection, {(m.job_id, m.attempt): m for m in applied}.values())
    applied_ids = {id(m) for m in applied}
    return [id(m) in applied_ids for m in messages]


@dataclass(frozen=True)
class Listed:
    """An attempt a heartbeat lists while the store still has it ``queued``."""

    job_id: uuid.UUID
    attempt: int
    worker_id: str
    started_at: datetime
    renewed_at: datetime


async def start_listed(
    connection: AsyncConnection,
    changes: Changes,
    listed: Sequence[Listed],
    defaults: JobDefaults,
) -> set[tuple[uuid.UUID, int]]:
    """Start attempts from the heartbeats that list them (``domain.leases.listed_attempt``):
    their ``JobRunning`` is still on its way, and arrives stale. One that moved meanwhile is
    left alone; the next heartbeat judges it again. Returns the attempts started."""
    ordered = sorted(listed, key=lambda item: item.job_id)
    started = await apply_transitions(
        connection,
        changes,
        [
            Transition(
                item.job_id,
                S.QUEUED,
                S.RUNNING,
                f"started on {item.worker_id} (listed by its heartbeat)",
                attempt=item.attempt,
                values={
                    "worker_id": item.worker_id,
                    "started_at": item.started_at,
                    "renewed_at": item.renewed_at,
                },
            )
            for item in ordered
        ],
        job_writes.START_LISTED,
        job_writes.lease_params(defaults),
        locked=True,  # the heartbeat batch locked every listed job first
    )
    applied: list[Listed] = _count_started(changes, started, ordered)
    if applied:
        await attempts.start(connection, applied)
    return {(item.job_id, item.attempt) for item in applied}
