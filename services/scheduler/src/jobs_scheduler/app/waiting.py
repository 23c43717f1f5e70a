"""Jobs that wait for a worker serving their type (``domain/routing.py``).

The relay finds no live worker for a dispatch's type: the job waits, ``queued`` with the
reason (``mark_waiting``), visible on its page and in its timeline. A worker that does not
serve a type it received hands the attempt back (``hand_back``): it goes to the type's lane,
or waits. Once a worker serving the type is live, the waiting jobs are dispatched again
(``release_waiting``), highest priority first. A message sent again for an attempt whose
message was published before (a hand-back, a copy, a re-dispatch) is marked ``resent`` and
dated at the first dispatch, so the worker that gets it claims it as a copy
(``app/claims.py``): nothing runs twice. An attempt held back at its first dispatch
(``waiting_unsent``) has no other message anywhere: it goes out as a first delivery.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobResult, JobStatus, utcnow
from jobs_scheduler.adapters import job_writes, jobs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.domain.routing import Wait

S = JobStatus


async def mark_waiting(
    connection: AsyncConnection, changes: Changes, *, waits: Sequence[Wait]
) -> int:
    """The dispatches the relay could not route: their jobs wait (still ``queued``, the same
    attempt). Returns how many were marked."""
    marked = await apply_transitions(
        connection,
        changes,
        [
            Transition(
                w.job_id,
                S.QUEUED,
                S.QUEUED,
                f"waiting: {w.reason}",
                attempt=w.attempt,
                values={"waiting_reason": w.reason[:500], "waiting_unsent": w.unsent},
            )
            for w in sorted(waits, key=lambda w: w.job_id)
        ],
        job_writes.WAIT,
    )
    return len(marked)


async def release_waiting(
    connection: AsyncConnection, changes: Changes, types: set[str] | None, limit: int
) -> int:
    """Dispatch again the waiting jobs of ``types`` (those a live worker serves; None: any).
    The relay routes them (a lane, the queue, or waiting again)."""
    if types is not None and not types:
        return 0
    rows = await jobs.lock_waiting(connection, None if types is None else sorted(types), limit)
    if not rows:
        return 0
    moves = [
        Transition(row.id, S.QUEUED, S.QUEUED, f"a worker serving {row.type!r} is live")
        for row in sorted(rows, key=lambda row: row.id)
    ]
    released = await apply_transitions(
        connection,
        changes,
        moves,
        job_writes.REDISPATCH_SERVED,
        locked=True,  # lock_waiting
    )
    unsent = {row.id for row in rows if row.waiting_unsent}
    for job in released.values():
        sent_before = job.id not in unsent
        changes.dispatch(
            job,
            attempt=job.attempt,
            new_attempt=False,
            resent_after=(job.queued_at or utcnow()) if sent_before else None,
        )
    return len(released)


async def hand_back(
    connection: AsyncConnection, changes: Changes, job: Any, report: JobResult
) -> bool:
    """A worker that does not serve the job's type handed its ``queued`` attempt back: dispatch
    it again to the type's lane (only workers serving the type consume it), as a copy. A hand
    back of an attempt that moved on (started elsewhere, ended) is stale. True: applied."""
    job_id = job.id
    released = await apply_transitions(
        connection,
        changes,
        [
            Transition(
                job_id,
                S.QUEUED,
                S.QUEUED,
                f"handed back by {report.worker_id}: it does not serve {job.type!r}",
                attempt=report.attempt,
            )
        ],
        job_writes.REDISPATCH_SERVED,
    )
    row = released.get((job_id, report.attempt))
    if row is None:
        return False
    changes.dispatch(
        row,
        attempt=row.attempt,
        new_attempt=False,
        resent_after=row.queued_at or utcnow(),
        lane=True,
    )
    return True
