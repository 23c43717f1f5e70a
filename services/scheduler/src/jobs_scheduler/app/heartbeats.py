"""Worker heartbeats (``jobs.heartbeat``): the worker registry, lease renewals (one statement
per batch) and "lease lost" for attempts a worker no longer holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, Float, Integer, Text, bindparam, case, func, select, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ActiveAttempt, JobStatus, WorkerHeartbeat
from jobs_common.jobstore import job_attempts, jobs, workers
from jobs_scheduler.adapters.set_based import ArrayRows, any_of, interval_seconds, vouched
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.running import Listed, start_listed
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.leases import REPORTED_ENDS, listed_attempt

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
        {(a.job_id, a.attempt): (beat, a) for beat in latest.values() for a in beat.active}.items(),
        key=lambda item: item[0],
    )
    if not held:
        return 0
    kept = await _renew(connection, [(beat, listed) for _, (beat, listed) in held], defaults)
    unrenewed = [(beat, listed) for key, (beat, listed) in held if key not in kept]
    if unrenewed:
        kept |= await _judge_unrenewed(connection, changes, unrenewed, defaults)
    return len(kept)


async def _renew(
    connection: AsyncConnection,
    held: Sequence[tuple[WorkerHeartbeat, ActiveAttempt]],
    defaults: JobDefaults,
) -> set[tuple[Any, int]]:
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
        | {"lease_seconds": defaults.lease_seconds},
    )
    return {(row.id, row.attempt) for row in rows}


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
    ids = {"ids": list({listed.job_id for _, listed in unrenewed})}
    current = {row.id: row for row in await connection.execute(CURRENT_ATTEMPTS, ids)}
    reporters = {
        (row.job_id, row.attempt): row.worker_id
        for row in await connection.execute(REPORTED_ATTEMPTS, ids)
    }
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
    renewed = await _renew(connection, held, defaults) if held else set()
    return renewed | started
