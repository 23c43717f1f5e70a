"""The worker registry (``workers``) and the leases heartbeats renew: the latest heartbeat of
each worker upserted, the leases of the attempts it lists renewed from the heartbeat's send
time (one statement per batch), and what the store says of the attempts whose lease did not
renew (their job's current attempt, and the worker whose own result ended them)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import DateTime, Float, Integer, Text, bindparam, case, func, select, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ActiveAttempt, JobStatus, WorkerHeartbeat
from jobs_common.jobstore import job_attempts, jobs, workers
from jobs_scheduler.adapters.set_based import ArrayRows, any_of, interval_seconds, vouched
from jobs_scheduler.domain.leases import REPORTED_ENDS

S = JobStatus

RENEWALS = ArrayRows(
    "renewals",
    id=UUID(as_uuid=True),
    attempt=Integer(),
    worker_id=Text(),
    sent_at=DateTime(timezone=True),
    progress=Float(),
    progress_message=Text(),
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
        ),
        # The handler's latest progress, for this attempt (kept when the heartbeat has none).
        progress=case(
            (RENEWALS.c.progress.is_(None), jobs.c.progress),
            else_=func.jsonb_build_object(
                "attempt",
                RENEWALS.c.attempt,
                "percent",
                RENEWALS.c.progress,
                "message",
                RENEWALS.c.progress_message,
            ),
        ),
    )
    .returning(jobs.c.id, jobs.c.attempt)
)

CURRENT_ATTEMPTS = select(jobs.c.id, jobs.c.attempt, jobs.c.status, jobs.c.worker_id).where(
    jobs.c.id == any_of("ids", UUID(as_uuid=True))
)

# Attempts ended by a worker's own result, and by which worker.
REPORTED_ATTEMPTS = select(
    job_attempts.c.job_id, job_attempts.c.attempt, job_attempts.c.worker_id
).where(
    job_attempts.c.job_id == any_of("ids", UUID(as_uuid=True)),
    job_attempts.c.status.in_(sorted(REPORTED_ENDS)),
)


async def record_heartbeats(connection: AsyncConnection, beats: Iterable[WorkerHeartbeat]) -> None:
    """Upsert each worker's row from its heartbeat (one per worker); a heartbeat applied late
    (redelivered) never moves ``last_heartbeat_at`` back, nor its counts (cumulative, so the
    greater is the later), nor a quiet worker back to taking jobs (quiet lasts as long as the
    process)."""
    rows = [
        {
            "id": b.worker_id,
            "hostname": b.hostname,
            "pid": b.pid,
            "version": b.version,
            "queues": b.queues,
            "types": b.types,
            "concurrency": b.concurrency,
            "active_jobs": len(b.active),
            "started_at": b.started_at,
            "last_heartbeat_at": vouched(b.sent_at),
            "stopping": b.stopping,
            "quiet": b.quiet,
            "processed": b.processed,
            "failed": b.failed,
        }
        for b in sorted(beats, key=lambda b: b.worker_id)
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
                        "types",
                        "concurrency",
                        "active_jobs",
                        "stopping",
                    )
                },
                # A heartbeat applied late (redelivered) never moves the registry back.
                "last_heartbeat_at": func.greatest(
                    workers.c.last_heartbeat_at, statement.excluded.last_heartbeat_at
                ),
                "quiet": workers.c.quiet | statement.excluded.quiet,
                **{
                    c: func.greatest(workers.c[c], statement.excluded[c])
                    for c in ("processed", "failed")
                },
            },
        )
    )


async def renew_leases(
    connection: AsyncConnection,
    held: Sequence[tuple[WorkerHeartbeat, ActiveAttempt]],
    lease_seconds: int,
) -> set[tuple[uuid.UUID, int]]:
    """Renew the leases of attempts running on the worker that lists them, and record their
    progress (one statement); the keys renewed."""
    rows = await connection.execute(
        RENEW_LEASES,
        RENEWALS.params(
            (
                listed.job_id,
                listed.attempt,
                beat.worker_id,
                beat.sent_at,
                listed.progress,
                listed.progress_message,
            )
            for beat, listed in held
        )
        | {"lease_seconds": lease_seconds},
    )
    return {(row.id, row.attempt) for row in rows}


async def current_attempts(
    connection: AsyncConnection, job_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, Any]:
    """Each job's current attempt, status and holder (worker_id), by job id."""
    rows = await connection.execute(CURRENT_ATTEMPTS, {"ids": list(job_ids)})
    return {row.id: row for row in rows}


async def reporters(
    connection: AsyncConnection, job_ids: Sequence[uuid.UUID]
) -> dict[tuple[uuid.UUID, int], str | None]:
    """The worker whose own result ended each attempt of ``job_ids`` that a result ended."""
    rows = await connection.execute(REPORTED_ATTEMPTS, {"ids": list(job_ids)})
    return {(row.job_id, row.attempt): row.worker_id for row in rows}
