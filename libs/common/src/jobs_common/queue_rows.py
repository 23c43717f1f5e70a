"""A project's queues as their views (``queue_commands.QueueView``), read alike by the
dashboard (listings) and the scheduler (the answer to a command): the row with how many of
its jobs wait and run now, counted on the unfinished jobs' index (migration 0016)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, func, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import jobs, queues
from jobs_common.queue_commands import (
    ConcurrencyKey,
    QueueView,
    RateLimit,
    queue_projects,
)
from jobs_common.tenancy import Scope

# Literal, so the planner matches the partial index's predicate.
UNFINISHED = text("jobs.status NOT IN ('succeeded', 'dead', 'cancelled')")
_PERIODS = {1: "second", 60: "minute"}


def within(scope: Scope) -> list[ColumnElement[bool]]:
    """The WHERE clauses keeping ``queues`` within ``scope``."""
    projects = queue_projects(scope)
    return [] if projects is None else [queues.c.project_id.in_(sorted(projects))]


async def counts(
    connection: AsyncConnection, pairs: Sequence[tuple[uuid.UUID, str]]
) -> dict[tuple[uuid.UUID, str], tuple[int, int]]:
    """(waiting, running) of each (project, queue) that has unfinished jobs."""
    if not pairs:
        return {}
    running = func.count().filter(jobs.c.status == "running")
    rows = await connection.execute(
        select(jobs.c.project_id, jobs.c.queue, func.count() - running, running)
        .where(UNFINISHED, tuple_(jobs.c.project_id, jobs.c.queue).in_(list(pairs)))
        .group_by(jobs.c.project_id, jobs.c.queue)
    )
    return {(row[0], row[1]): (int(row[2]), int(row[3])) for row in rows}


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
    found = await counts(connection, [(row.project_id, row.name) for row in rows])
    return [view_of(row, *found.get((row.project_id, row.name), (0, 0))) for row in rows]


async def total(connection: AsyncConnection, conditions: Sequence[ColumnElement[bool]]) -> int:
    statement = select(func.count()).select_from(queues).where(*conditions)
    return int((await connection.execute(statement)).scalar_one())


async def one(connection: AsyncConnection, queue_id: uuid.UUID, scope: Scope) -> QueueView | None:
    found = await read(connection, [queues.c.id == queue_id, *within(scope)])
    return found[0] if found else None


def view_of(row: Any, waiting: int = 0, running: int = 0) -> QueueView:
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
        waiting=waiting,
        running=running,
    )
