"""Worker heartbeats (``jobs.heartbeat``): the worker registry, lease renewals (one statement
per batch) and "lease lost" for attempts a worker no longer holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, Integer, Text, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus, WorkerHeartbeat
from jobs_common.jobstore import jobs, workers
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.sql import ArrayRows, any_of, interval_seconds, vouched
from jobs_scheduler.domain.defaults import JobDefaults

S = JobStatus

RENEWALS = ArrayRows(
    "renewals",
    id=UUID(as_uuid=True),
    attempt=Integer(),
    worker_id=Text(),
    sent_at=DateTime(timezone=True),
)

# Leases of the attempts each worker still holds, renewed from the heartbeat's send time.
RENEW_LEASES = (
    update(jobs)
    .where(
        jobs.c.id == RENEWALS.c.id,
        jobs.c.attempt == RENEWALS.c.attempt,
        jobs.c.status == S.RUNNING.value,
        jobs.c.worker_id == RENEWALS.c.worker_id,
    )
    .values(
        lease_expires_at=func.greatest(
            jobs.c.lease_expires_at,
            vouched(RENEWALS.c.sent_at)
            + interval_seconds(bindparam("lease_seconds", type_=Integer())),
        )
    )
    .returning(jobs.c.id, jobs.c.attempt)
)

CURRENT_ATTEMPTS = select(jobs.c.id, jobs.c.attempt, jobs.c.status).where(
    jobs.c.id == any_of("ids", UUID(as_uuid=True))
)


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
    rows = [
        {
            "id": b.worker_id,
            "hostname": b.hostname,
            "pid": b.pid,
            "version": b.version,
            "queues": b.queues,
            "concurrency": b.concurrency,
            "active_jobs": len(b.active),
            "started_at": b.started_at,
            "last_heartbeat_at": vouched(b.sent_at),
            "stopping": b.stopping,
        }
        for b in sorted(latest.values(), key=lambda b: b.worker_id)
    ]
    statement = insert(workers).values(rows)
    await connection.execute(
        statement.on_conflict_do_update(
            index_elements=[workers.c.id],
            set_={
                **{
                    c: statement.excluded[c]
                    for c in (
                        "hostname",
                        "pid",
                        "version",
                        "queues",
                        "concurrency",
                        "active_jobs",
                        "stopping",
                    )
                },
                # A heartbeat applied late (redelivered) never moves the registry back.
                "last_heartbeat_at": func.greatest(
                    workers.c.last_heartbeat_at, statement.excluded.last_heartbeat_at
                ),
            },
        )
    )
    held = sorted(
        {(a.job_id, a.attempt): beat for beat in latest.values() for a in beat.active}.items(),
        key=lambda item: item[0],
    )
    if not held:
        return 0
    kept = {
        (row.id, row.attempt)
        for row in await connection.execute(
            RENEW_LEASES,
            RENEWALS.params(
                (job_id, attempt, beat.worker_id, beat.sent_at) for (job_id, attempt), beat in held
            )
            | {"lease_seconds": defaults.lease_seconds},
        )
    }
    lost = [(key, beat.worker_id) for key, beat in held if key not in kept]
    if lost:
        await _cancel_lost(connection, changes, lost)
    return len(kept)


async def _cancel_lost(
    connection: AsyncConnection,
    changes: Changes,
    lost: list[tuple[tuple[Any, int], str]],
) -> None:
    """Workers hold attempts the store no longer gives them: stop those they truly lost.

    An attempt still ``queued`` with the same number is not lost: its running message has
    not been applied yet (separate queues).
    """
    rows = await connection.execute(
        CURRENT_ATTEMPTS, {"ids": list({job_id for (job_id, _), _ in lost})}
    )
    current = {row.id: row for row in rows}
    for (job_id, attempt), worker_id in lost:
        row = current.get(job_id)
        if row is not None and row.attempt == attempt and row.status == S.QUEUED.value:
            continue
        changes.cancel_attempt(job_id, attempt, "lease lost", worker_id=worker_id)
