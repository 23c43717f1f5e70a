"""The rows retention removes, in bounded batches (the rules: ``domain/retention.py``).

Each call locks at most ``limit`` rows (``SKIP LOCKED``: replicas share the work, and a row
another transaction holds waits for the next pass) and deletes them in the caller's
transaction, so no lock is held for long and a backlog drains a batch at a time. A job goes
with its attempts, events, dependency rows and resolved dead letters (foreign keys, ``ON
DELETE CASCADE``) and its log lines (deleted here: ``job_logs`` has no foreign key); a batch
row goes with its last member."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Table,
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    not_,
    select,
    tuple_,
)
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import (
    batches,
    dead_letter_actions,
    dead_letters,
    inbox,
    job_dependencies,
    job_logs,
    jobs,
    poison_messages,
    schedule_fires,
    schedules,
)
from jobs_scheduler.adapters.set_based import any_of

_UUID = UUID(as_uuid=True)
Cutoffs = Mapping[JobStatus, datetime]


def _cutoff_param(status: JobStatus) -> Any:
    return bindparam(f"cutoff_{status.value}", type_=DateTime(timezone=True))


def _is_due(job: Any, statuses: list[JobStatus]) -> ColumnElement[bool]:
    """``domain.retention.is_due`` in SQL, for the job row ``job``: finished before its
    status's cutoff, with no open dead letter. Never NULL."""
    cutoff = case(
        *((job.c.status == status.value, _cutoff_param(status)) for status in statuses),
        else_=None,
    )
    open_letter = exists().where(
        dead_letters.c.job_id == job.c.id, dead_letters.c.resolved_at.is_(None)
    )
    return func.coalesce(
        and_(job.c.finished_at < cutoff, not_(open_letter)), False, type_=Boolean()
    )


def _prunable(status: JobStatus, cutoffs: Cutoffs) -> Select[Any]:
    """The jobs of ``status`` that may go (``domain.retention.may_go``), finished longest ago
    first: ``(id, batch_id, finished_at)``."""
    statuses = list(cutoffs)
    member = jobs.alias("member")
    child = jobs.alias("child")
    kept_member = exists().where(
        member.c.batch_id == jobs.c.batch_id,
        member.c.id != jobs.c.id,
        not_(_is_due(member, statuses)),
    )
    kept_child = exists().where(
        job_dependencies.c.depends_on == jobs.c.id,
        child.c.id == job_dependencies.c.job_id,
        not_(_is_due(child, statuses)),
    )
    latest_of_schedule = exists().where(schedules.c.last_job_id == jobs.c.id)
    return (
        select(jobs.c.id, jobs.c.batch_id, jobs.c.finished_at)
        .where(
            jobs.c.status == status.value,
            jobs.c.finished_at < _cutoff_param(status),
            _is_due(jobs, statuses),
            not_(kept_member),
            not_(kept_child),
            not_(latest_of_schedule),
        )
        .order_by(jobs.c.finished_at)
    )


def _cutoffs(cutoffs: Cutoffs) -> dict[str, datetime]:
    return {f"cutoff_{s.value}": at for s, at in cutoffs.items()}


async def lock_prunable(
    connection: AsyncConnection, status: JobStatus, cutoffs: Cutoffs, limit: int
) -> list[tuple[uuid.UUID, uuid.UUID | None]]:
    """Up to ``limit`` jobs of ``status`` that may go, finished longest ago first, locked
    (``SKIP LOCKED``): ``(id, batch_id)``."""
    query = _prunable(status, cutoffs).limit(limit).with_for_update(of=jobs, skip_locked=True)
    rows = await connection.execute(query, _cutoffs(cutoffs))
    return [(row.id, row.batch_id) for row in rows]


async def oldest_due(
    connection: AsyncConnection, status: JobStatus, cutoffs: Cutoffs
) -> datetime | None:
    """When the job of ``status`` that may go and finished longest ago finished (None: none
    is left): how far the pruner is behind."""
    query = _prunable(status, cutoffs).limit(1)
    row = (await connection.execute(query, _cutoffs(cutoffs))).first()
    return None if row is None else row.finished_at


async def delete_jobs(
    connection: AsyncConnection, found: list[tuple[uuid.UUID, uuid.UUID | None]]
) -> dict[str, int]:
    """Delete the jobs (and what goes with them) and the batches they emptied; rows deleted,
    by table (the cascaded ones not counted)."""
    if not found:
        return {}
    ids = [job_id for job_id, _ in found]
    batch_ids = sorted({batch_id for _, batch_id in found if batch_id is not None})
    in_ids = any_of("ids", _UUID, ids)
    lines = await connection.execute(delete(job_logs).where(job_logs.c.job_id == in_ids))
    gone = await connection.execute(delete(jobs).where(jobs.c.id == in_ids))
    emptied = 0
    if batch_ids:
        result = await connection.execute(
            delete(batches).where(
                batches.c.id == any_of("batch_ids", _UUID, batch_ids),
                ~exists().where(jobs.c.batch_id == batches.c.id),
            )
        )
        emptied = result.rowcount
    return {"jobs": gone.rowcount, "job_logs": lines.rowcount, "batches": emptied}


# Tables whose rows go once older than their window: the time column they are kept by, and
# their key.
AGED: dict[str, tuple[Table, Any, tuple[Any, ...]]] = {
    "inbox": (inbox, inbox.c.received_at, (inbox.c.message_id,)),
    "poison_messages": (poison_messages, poison_messages.c.received_at, (poison_messages.c.id,)),
    "dead_letter_actions": (
        dead_letter_actions,
        dead_letter_actions.c.at,
        (dead_letter_actions.c.id,),
    ),
    # a fire time long past is never fired again
    "schedule_fires": (
        schedule_fires,
        schedule_fires.c.fire_time,
        (schedule_fires.c.schedule_id, schedule_fires.c.fire_time),
    ),
}


async def delete_older(
    connection: AsyncConnection, table: str, before: datetime, limit: int
) -> int:
    """Delete up to ``limit`` rows of an aged table older than ``before``, oldest first
    (locked first, then deleted: a locking subquery inside the DELETE could be run again per
    row and pass its LIMIT)."""
    rows, at, keys = AGED[table]
    chosen = (
        await connection.execute(
            select(*keys)
            .where(at < before)
            .order_by(at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    ).all()
    if not chosen:
        return 0
    if len(keys) == 1:
        chosen_rows = keys[0].in_([row[0] for row in chosen])
    else:
        chosen_rows = tuple_(*keys).in_([tuple(row) for row in chosen])
    result = await connection.execute(delete(rows).where(chosen_rows))
    return int(result.rowcount)


async def oldest_finished(connection: AsyncConnection, status: JobStatus) -> datetime | None:
    """When the job of ``status`` finished longest ago still kept (``ix_jobs_finished``)."""
    oldest: datetime | None = await connection.scalar(
        select(func.min(jobs.c.finished_at)).where(jobs.c.status == status.value)
    )
    return oldest


# The tables a job's delete reaches through ON DELETE CASCADE (their rows are dead too).
CASCADED: dict[str, tuple[str, ...]] = {
    "jobs": ("job_attempts", "job_events", "job_dependencies", "dead_letters"),
}
