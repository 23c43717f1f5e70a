"""Job rows as the use cases read and lock them (the due, the blocked, the unconsumed, the
running past their lease...), and dispatching a job's next attempt (through the status
writer, ``status.py``). Statuses change only there; the other columns a few commands set
are here (a cancel request, the count of lost attempts)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TypeAlias

from sqlalchemy import Integer, and_, bindparam, delete, exists, func, or_, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import job_dependencies, jobs, outbox, workers
from jobs_scheduler.adapters.set_based import ArrayRows, interval_seconds
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, Write, apply_transitions
from jobs_scheduler.domain.transitions import sources_of

S = JobStatus

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
    jobs.c.project_id,
    jobs.c.submitted_by,  # who it runs for (ctx.submit)
    jobs.c.has_parents,  # its dispatches carry its parents' results
)

# Queued with its ready message out of the outbox: in the broker or a worker's hands. A job
# waiting for a worker of its type has no message; one whose dispatch is in the outbox (not
# relayed yet, or held by its queue's pause or limits) has none out yet.
SENT = and_(
    jobs.c.status == S.QUEUED.value,
    jobs.c.waiting_reason.is_(None),
    ~exists().where(outbox.c.job_id == jobs.c.id),
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
    jobs.c.project_id,
    jobs.c.has_parents,
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


async def database_now(connection: AsyncConnection) -> datetime:
    """The transaction's ``now()``: the clock every stored time is compared with."""
    now: datetime = (await connection.execute(select(func.now()))).scalar_one()
    return now


async def lock_due_scheduled(connection: AsyncConnection, limit: int) -> list[uuid.UUID]:
    """Up to ``limit`` scheduled jobs whose ``run_at`` has come, earliest first, locked
    (``SKIP LOCKED``: another replica's are passed over)."""
    due = await connection.execute(
        select(jobs.c.id)
        .where(jobs.c.status == S.SCHEDULED.value, jobs.c.run_at <= func.now())
        .order_by(jobs.c.run_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(due.scalars())


async def lock_blocked_with_parents_ended(
    connection: AsyncConnection, limit: int, ended: Sequence[str]
) -> list[JobRow]:
    """Up to ``limit`` blocked jobs (id, run_at), oldest first, locked, none of whose
    parents is missing or in a status outside ``ended``."""
    parent = jobs.alias("parent")
    unfinished_parent = exists().where(
        job_dependencies.c.job_id == jobs.c.id,
        ~exists().where(
            and_(parent.c.id == job_dependencies.c.depends_on, parent.c.status.in_(ended))
        ),
    )
    rows = await connection.execute(
        select(jobs.c.id, jobs.c.run_at)
        .where(jobs.c.status == S.BLOCKED.value, ~unfinished_parent)
        .order_by(jobs.c.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(rows.all())


async def parents_of(connection: AsyncConnection, job_id: uuid.UUID) -> list[tuple[uuid.UUID, str]]:
    """``(id, status)`` of each parent of ``job_id``, in id order."""
    parent = jobs.alias("parent")
    rows = await connection.execute(
        select(parent.c.id, parent.c.status)
        .select_from(job_dependencies.join(parent, parent.c.id == job_dependencies.c.depends_on))
        .where(job_dependencies.c.job_id == job_id)
        .order_by(job_dependencies.c.depends_on)
    )
    return [(row.id, row.status) for row in rows]


async def drop_unsent_dispatches(connection: AsyncConnection, job_id: uuid.UUID) -> None:
    """Delete a cancelled job's dispatches still in the outbox (held there while its queue is
    paused) that no relay pass is publishing (a pass's rows are locked: skipped); one a dead
    pass may have published goes too, as the claim of its copy finds the job cancelled."""
    locked = select(outbox.c.id).where(outbox.c.job_id == job_id).with_for_update(skip_locked=True)
    await connection.execute(delete(outbox).where(outbox.c.id.in_(locked)))


async def lock_unconsumed_queued(
    connection: AsyncConnection, limit: int, after_seconds: float
) -> list[JobRow]:
    """Up to ``limit`` queued jobs (every column) whose ready message the broker took more
    than ``after_seconds`` ago (``queued_at``) and whose dispatch is no longer waiting in the
    outbox, oldest first, locked (``SKIP LOCKED``). A job waiting for a worker of its type has
    no message to lose."""
    rows = await connection.execute(
        select(*JOB_COLUMNS)
        .where(SENT, jobs.c.queued_at < func.now() - interval_seconds(after_seconds))
        .order_by(jobs.c.queued_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(rows.all())


async def lock_running_past(
    connection: AsyncConnection, limit: int, horizon: datetime
) -> list[JobRow]:
    """Up to ``limit`` running jobs whose lease or deadline lies before ``horizon``, with
    their lease, deadline and worker's last heartbeat, in id order, locked (``SKIP
    LOCKED``)."""
    rows = await connection.execute(
        select(
            *JOB_COLUMNS, jobs.c.lease_expires_at, jobs.c.deadline_at, workers.c.last_heartbeat_at
        )
        .select_from(jobs.outerjoin(workers, workers.c.id == jobs.c.worker_id))
        .where(
            jobs.c.status == S.RUNNING.value,
            or_(jobs.c.lease_expires_at < horizon, jobs.c.deadline_at < horizon),
        )
        .order_by(jobs.c.id)
        .limit(limit)
        .with_for_update(of=jobs, skip_locked=True)
    )
    return list(rows.all())


async def set_lost_count(connection: AsyncConnection, job_id: uuid.UUID, lost_count: int) -> None:
    await connection.execute(update(jobs).where(jobs.c.id == job_id).values(lost_count=lost_count))


async def record_cancel_request(
    connection: AsyncConnection, job_id: uuid.UUID, requested_by: str
) -> None:
    await connection.execute(
        update(jobs)
        .where(jobs.c.id == job_id)
        .values(cancel_requested_at=func.now(), cancel_requested_by=requested_by)
    )


REPORTED = ArrayRows("reported", id=UUID(as_uuid=True), attempt=Integer())
# The jobs whose current attempt was reported and may still end, locked in id order.
LOCK_REPORTED = (
    select(*JOB_COLUMNS, jobs.c.queued_at)
    .select_from(
        jobs.join(
            REPORTED.table,
            and_(jobs.c.id == REPORTED.c.id, jobs.c.attempt == REPORTED.c.attempt),
        )
    )
    .where(jobs.c.status.in_(sorted(set(sources_of(S.SUCCEEDED)) & set(sources_of(S.FAILED)))))
    .order_by(jobs.c.id)
    .with_for_update(of=jobs)
)


async def lock_reported(
    connection: AsyncConnection, attempts: Iterable[tuple[uuid.UUID, int]]
) -> list[JobRow]:
    """The jobs (every column, and ``queued_at``) still at one of ``attempts`` and in a
    status it may end from, locked in id order (one statement, whatever their number)."""
    return list((await connection.execute(LOCK_REPORTED, REPORTED.params(attempts))).all())


async def lock_claimed(
    connection: AsyncConnection, job_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, JobRow]:
    """The rows a claim is judged on (status, attempt, holder, lease), locked in id order."""
    query = (
        select(jobs.c.id, jobs.c.status, jobs.c.attempt, jobs.c.worker_id, jobs.c.lease_expires_at)
        .where(jobs.c.id.in_(sorted(set(job_ids))))
        .order_by(jobs.c.id)
        .with_for_update()
    )
    return {row.id: row for row in await connection.execute(query)}


async def lock_waiting(
    connection: AsyncConnection, types: Sequence[str] | None, limit: int
) -> list[JobRow]:
    """Queued jobs waiting for a worker of their type (``ix_jobs_waiting``), of ``types`` (None:
    any), highest priority and oldest first, locked (``SKIP LOCKED``)."""
    query = select(jobs.c.id, jobs.c.attempt, jobs.c.type, jobs.c.waiting_unsent).where(
        jobs.c.waiting_reason.is_not(None), jobs.c.status == S.QUEUED.value
    )
    if types is not None:
        query = query.where(jobs.c.type.in_(sorted(types)))
    query = (
        query.order_by(jobs.c.priority.desc(), jobs.c.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await connection.execute(query)).all())


# Running attempts locked in id order first (every batch's lock order), then their leases.
_RUNNING = (
    select(jobs.c.id)
    .where(jobs.c.status == S.RUNNING.value)
    .order_by(jobs.c.id)
    .with_for_update()
    .subquery("running")
)
EXTEND_LEASES = (
    update(jobs)
    .where(jobs.c.id == _RUNNING.c.id, jobs.c.status == S.RUNNING.value)
    .values(
        lease_expires_at=func.greatest(
            jobs.c.lease_expires_at,
            func.now() + interval_seconds(bindparam("lease_seconds", type_=Integer())),
        )
    )
)


async def extend_running_leases(connection: AsyncConnection, lease_seconds: float) -> int:
    """Every running attempt's lease runs at least ``lease_seconds`` from now."""
    result = await connection.execute(EXTEND_LEASES, {"lease_seconds": lease_seconds})
    return int(result.rowcount or 0)
