"""Worker heartbeats (``jobs.heartbeat``): the worker registry, lease renewals (one statement
per batch) and "lease lost" for attempts a worker no longer holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ActiveAttempt, JobStatus, WorkerHeartbeat
from jobs_scheduler.adapters import workers
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import lock_in_id_order
from jobs_scheduler.app.running import Listed, start_listed
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.leases import listed_attempt

S = JobStatus


async def apply_heartbeats(
    connection: AsyncConnection,
    changes: Changes,
    beats: Sequence[WorkerHeartbeat],
    defaults: JobDefaults,
) -> int:
    """Upsert the worker registry, renew the leases of the attempts each worker still holds
    (one statement for the whole batch), and tell a worker to stop an attempt it lost
    (cancelled, re-dispatched, finished). A lease runs from the heartbeat's own send time."""
    latest: dict[str, WorkerHeartbeat] = {}
    for beat in beats:
        if beat.worker_id not in latest or beat.sent_at > latest[beat.worker_id].sent_at:
            latest[beat.worker_id] = beat
    await workers.record_heartbeats(connection, latest.values())
    held = sorted(
        {(a.job_id, a.attempt): (beat, a) for beat in latest.values() for a in beat.active}.items(),
        key=lambda item: item[0],
    )
    if not held:
        return 0
    # Every listed job locked up front, in id order: the renewal below and the starts of
    # ``_judge_unrenewed`` lock different rows in two statements (a deadlock with a results
    # batch, seen in a flood: the heartbeat failed and its leases ran out).
    await lock_in_id_order(connection, (job_id for (job_id, _), _ in held))
    kept = await workers.renew_leases(
        connection, [(beat, listed) for _, (beat, listed) in held], defaults.lease_seconds
    )
    unrenewed = [(beat, listed) for key, (beat, listed) in held if key not in kept]
    if unrenewed:
        kept |= await _judge_unrenewed(connection, changes, unrenewed, defaults)
    return len(kept)


async def _judge_unrenewed(
    connection: AsyncConnection,
    changes: Changes,
    unrenewed: Sequence[tuple[WorkerHeartbeat, ActiveAttempt]],
    defaults: JobDefaults,
) -> set[tuple[Any, int]]:
    """Listed attempts whose lease did not renew, judged against the job's row read now
    (``domain.leases.listed_attempt``): started from the heartbeat while still ``queued``,
    renewed if their start committed meanwhile, passed over when the worker's own result
    ended them, told to stop only when the store moved on. Returns the keys started or
    renewed."""
    ids = list({listed.job_id for _, listed in unrenewed})
    current = await workers.current_attempts(connection, ids)
    reporters = await workers.reporters(connection, ids)
    starts: list[Listed] = []
    held: list[tuple[WorkerHeartbeat, ActiveAttempt]] = []
    for beat, listed in unrenewed:
        row = current.get(listed.job_id)
        verdict = listed_attempt(
            attempt=listed.attempt,
            worker_id=beat.worker_id,
            status=row.status if row is not None else None,
            current_attempt=row.attempt if row is not None else None,
            holder=row.worker_id if row is not None else None,
            reported_by=reporters.get((listed.job_id, listed.attempt)),
        )
        if verdict == "start":
            starts.append(
                Listed(
                    listed.job_id,
                    listed.attempt,
                    beat.worker_id,
                    started_at=listed.started_at or beat.sent_at,
                    renewed_at=beat.sent_at,
                )
            )
        elif verdict == "held":
            held.append((beat, listed))
        elif verdict == "lost":
            changes.cancel_attempt(
                listed.job_id, listed.attempt, "lease lost", worker_id=beat.worker_id
            )
    started = await start_listed(connection, changes, starts, defaults) if starts else set()
    renewed = (
        await workers.renew_leases(connection, held, defaults.lease_seconds) if held else set()
    )
    return renewed | started
