"""A project's queues as their views (``queue_commands.QueueView``), read alike by the
dashboard (listings) and the scheduler (the answer to a command): the row with its unfinished
jobs now by status and priority (and so how many wait and run), counted on the unfinished
jobs' index (migrations 0016, 0020)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, bindparam, func, select, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import Text

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import queues
from jobs_common.queue_commands import (
    ConcurrencyKey,
    QueueDepthEntry,
    QueueView,
    RateLimit,
    queue_projects,
)
from jobs_common.tenancy import Scope

# Literal, so the planner matches the partial index's predicate.
UNFINISHED = text("jobs.status NOT IN ('succeeded', 'dead', 'cancelled')")
_PERIODS = {1: "second", 60: "minute"}
_LIFECYCLE = {status: rank for rank, status in enumerate(JobStatus)}

# A nested loop over the (project, queue) pairs, each an index-only scan of
# ix_jobs_queue_unfinished (project_id, queue, status, priority). A row-value IN list would be
# planned as a bitmap OR, which reads every job's heap page.
DEPTH = text(
    """
    SELECT p.project_id, p.queue, jobs.status, jobs.priority, count(*) AS count
    FROM unnest(:projects, :queues) AS p (project_id, queue)
    JOIN jobs ON jobs.project_id = p.project_id AND jobs.queue = p.queue
      AND jobs.status NOT IN ('succeeded', 'dead', 'cancelled')
    GROUP BY p.project_id, p.queue, jobs.status, jobs.priority
    """
).bindparams(
    bindparam("projects", type_=ARRAY(UUID(as_uuid=True))),
    bindparam("queues", type_=ARRAY(Text)),
)

# The oldest queued job of each (project, queue) with some: a scan of its queued entries in
# ix_jobs_queue_unfinished, reading their rows' created_at (as queue_oldest_waiting_seconds).
OLDEST = text(
    """
    SELECT p.project_id, p.queue, min(jobs.created_at) AS oldest,
           extract(epoch FROM now() - min(jobs.created_at)) AS age
    FROM unnest(:projects, :queues) AS p (project_id, queue)
    JOIN jobs ON jobs.project_id = p.project_id AND jobs.queue = p.queue
      AND jobs.status NOT IN ('succeeded', 'dead', 'cancelled') AND jobs.status = 'queued'
    GROUP BY p.project_id, p.queue
    """
).bindparams(
    bindparam("projects", type_=ARRAY(UUID(as_uuid=True))),
    bindparam("queues", type_=ARRAY(Text)),
)

Depth = list[QueueDepthEntry]
Pair = tuple[uuid.UUID, str]


def within(scope: Scope) -> list[ColumnElement[bool]]:
    """The WHERE clauses keeping ``queues`` within ``scope``."""
    projects = queue_projects(scope)
    return [] if projects is None else [queues.c.project_id.in_(sorted(projects))]


async def depths(
    connection: AsyncConnection, pairs: Sequence[tuple[uuid.UUID, str]]
) -> dict[tuple[uuid.UUID, str], Depth]:
    """The unfinished jobs of each (project, queue) that has some, by status and priority:
    in the order of the job lifecycle, high priority first."""
    if not pairs:
        return {}
    rows = await connection.execute(
        DEPTH, {"projects": [p for p, _ in pairs], "queues": [q for _, q in pairs]}
    )
    found: dict[tuple[uuid.UUID, str], Depth] = {}
    for row in rows:
        entry = QueueDepthEntry(status=row.status, priority=row.priority, count=row.count)
        found.setdefault((row.project_id, row.queue), []).append(entry)
    for entries in found.values():
        entries.sort(key=lambda e: (_LIFECYCLE[e.status], -e.priority))
    return found


async def read(
    connection: AsyncConnection,
    conditions: Sequence[ColumnElement[bool]],
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[QueueView]:
    """The queues meeting ``conditions``, by project and name."""
    statement = (
        select(queues)
        .where(*conditions)
        .order_by(queues.c.project_id, queues.c.name)
        .offset(offset)
        .limit(limit)
    )
    rows = (await connection.execute(statement)).all()
    found = await depths(connection, [(row.project_id, row.name) for row in rows])
    queued = [
        pair
        for pair, depth in found.items()
        if any(entry.status == JobStatus.QUEUED for entry in depth)
    ]
    ages = await oldest(connection, queued)
    return [
        view_of(row, found.get(pair, []), *ages.get(pair, (None, None)))
        for row in rows
        for pair in ((row.project_id, row.name),)
    ]


async def oldest(
    connection: AsyncConnection, pairs: Sequence[Pair]
) -> dict[Pair, tuple[datetime, float]]:
    """When the oldest queued job of each of ``pairs`` was submitted, and its age now."""
    if not pairs:
        return {}
    rows = await connection.execute(
        OLDEST, {"projects": [p for p, _ in pairs], "queues": [q for _, q in pairs]}
    )
    return {(row.project_id, row.queue): (row.oldest, float(row.age)) for row in rows}


async def total(connection: AsyncConnection, conditions: Sequence[ColumnElement[bool]]) -> int:
    statement = select(func.count()).select_from(queues).where(*conditions)
    return int((await connection.execute(statement)).scalar_one())


async def one(connection: AsyncConnection, queue_id: uuid.UUID, scope: Scope) -> QueueView | None:
    found = await read(connection, [queues.c.id == queue_id, *within(scope)])
    return found[0] if found else None


def view_of(
    row: Any,
    depth: Depth | None = None,
    oldest_queued_at: datetime | None = None,
    oldest_age_seconds: float | None = None,
) -> QueueView:
    depth = depth or []
    running = sum(e.count for e in depth if e.status == JobStatus.RUNNING)
    rate = (
        RateLimit(limit=row.rate_limit, per=_PERIODS[row.rate_per_seconds])
        if row.rate_limit is not None
        else None
    )
    key = (
        ConcurrencyKey(field=row.concurrency_key, limit=row.concurrency_key_limit)
        if row.concurrency_key is not None
        else None
    )
    return QueueView(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        max_concurrency=row.max_concurrency,
        rate_limit=rate,
        concurrency_key=key,
        paused=row.paused,
        paused_at=row.paused_at,
        paused_by=row.paused_by,
        default_priority=row.default_priority,
        default_timeout_seconds=row.default_timeout_seconds,
        default_retry_policy=row.default_retry_policy,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
        waiting=sum(e.count for e in depth) - running,
        running=running,
        oldest_queued_at=oldest_queued_at,
        oldest_age_seconds=oldest_age_seconds,
        depth=depth,
    )
