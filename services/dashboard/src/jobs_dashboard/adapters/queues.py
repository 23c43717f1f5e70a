"""A project's queues as read: pages and one queue, each with its unfinished jobs now by
status and priority (``jobs_common.queue_rows``), and a page's last hour from the scheduler's
queue samples (``domain/queue_history.py``). The scheduler writes them
(``adapters/scheduler_api.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, bindparam, select, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import DateTime, Text

from jobs_common import queue_rows
from jobs_common.jobstore import queue_sample_minutes, queues
from jobs_common.queue_commands import QueueView
from jobs_common.tenancy import Scope
from jobs_dashboard.adapters.store import Store
from jobs_dashboard.domain.query import PageRequest
from jobs_dashboard.domain.queue_history import QueueHistory, series, window

# The samples of a page's queues since a minute: a probe of queue_samples' primary key
# (project_id, queue, minute) per queue.
SAMPLES = text(
    """
    SELECT s.project_id, s.queue, s.minute, s.waiting, s.running
    FROM unnest(:projects, :queues) AS p (project_id, queue)
    JOIN queue_samples AS s ON s.project_id = p.project_id AND s.queue = p.queue
      AND s.minute >= :first
    """
).bindparams(
    bindparam("projects", type_=ARRAY(UUID(as_uuid=True))),
    bindparam("queues", type_=ARRAY(Text)),
    bindparam("first", type_=DateTime(timezone=True)),
)
NOW_MINUTE = text("SELECT date_trunc('minute', now())")


class QueueStore(Store):
    async def page(
        self, scope: Scope, page: PageRequest, *, name: str | None = None
    ) -> tuple[list[QueueView], int]:
        """The queues ``scope`` reaches (of one ``name``), by project and name."""
        conditions = _conditions(scope, name)
        async with self.snapshot() as connection:
            total = await queue_rows.total(connection, conditions)
            items = await queue_rows.read(
                connection, conditions, limit=page.limit, offset=page.offset
            )
            return items, total

    async def get(self, queue_id: uuid.UUID, scope: Scope) -> QueueView | None:
        async with self.snapshot() as connection:
            return await queue_rows.one(connection, queue_id, scope)

    async def history(
        self, scope: Scope, page: PageRequest, *, minutes: int, name: str | None = None
    ) -> tuple[datetime, list[QueueHistory], int]:
        """The last ``minutes`` minutes of the page of queues :meth:`page` lists: the first
        minute, each queue's series, and how many queues there are."""
        conditions = _conditions(scope, name)
        async with self.snapshot() as connection:
            total = await queue_rows.total(connection, conditions)
            rows = (
                await connection.execute(
                    select(queues.c.id, queues.c.project_id, queues.c.name)
                    .where(*conditions)
                    .order_by(queues.c.project_id, queues.c.name)
                    .offset(page.offset)
                    .limit(page.limit)
                )
            ).all()
            first = window(await connection.scalar(NOW_MINUTE), minutes)
            sampled = set(
                (
                    await connection.execute(
                        select(queue_sample_minutes.c.minute).where(
                            queue_sample_minutes.c.minute >= first
                        )
                    )
                ).scalars()
            )
            found = await _samples(connection, [(r.project_id, r.name) for r in rows], first)
        items = []
        for row in rows:
            waiting, running = series(
                first, minutes, sampled, found.get((row.project_id, row.name), {})
            )
            items.append(
                QueueHistory(
                    queue_id=row.id,
                    project_id=row.project_id,
                    name=row.name,
                    waiting=waiting,
                    running=running,
                )
            )
        return first, items, total


def _conditions(scope: Scope, name: str | None) -> list[ColumnElement[bool]]:
    conditions = queue_rows.within(scope)
    if name is not None:
        conditions.append(queues.c.name == name)
    return conditions


async def _samples(
    connection: AsyncConnection, pairs: Sequence[tuple[uuid.UUID, str]], first: datetime
) -> dict[tuple[uuid.UUID, str], dict[datetime, tuple[int, int]]]:
    if not pairs:
        return {}
    rows = await connection.execute(
        SAMPLES,
        {"projects": [p for p, _ in pairs], "queues": [q for _, q in pairs], "first": first},
    )
    found: dict[tuple[uuid.UUID, str], dict[datetime, tuple[int, int]]] = {}
    for row in rows:
        found.setdefault((row.project_id, row.queue), {})[row.minute] = (row.waiting, row.running)
    return found
