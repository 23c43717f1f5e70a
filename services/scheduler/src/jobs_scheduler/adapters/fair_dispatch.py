"""Fair dispatch in SQL and the projects' weights (``domain/fair_dispatch.py`` orders a pass's
rows the same way): when the outbox holds more than a pass takes, the pass takes each
project's rows in rounds rather than the oldest ``limit`` rows, so a flood already in the
outbox does not hold back the one job another project wrote after it."""

from __future__ import annotations

import time
import uuid
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.jobstore import outbox, project_flow


def fair_rows(conditions: list[ColumnElement[bool]], limit: Any) -> Any:
    """The first ``limit`` rows (of those meeting ``conditions``: id, ready queue, project and
    queue) in fair order: rows of no project first, then by round (a project's n-th row, its
    queues in turn, is in round ``n // weight``), then by id."""
    by_queue = (
        select(
            outbox.c.id,
            outbox.c.routing_key,
            outbox.c.project_id,
            outbox.c.queue,
            func.row_number()
            .over(partition_by=(outbox.c.project_id, outbox.c.queue), order_by=outbox.c.id)
            .label("queue_turn"),
        )
        .where(*conditions)
        .subquery("by_queue")
    )
    by_project = select(
        by_queue.c.id,
        by_queue.c.routing_key,
        by_queue.c.project_id,
        by_queue.c.queue,
        (
            func.row_number().over(
                partition_by=by_queue.c.project_id,
                order_by=(by_queue.c.queue_turn, by_queue.c.queue, by_queue.c.id),
            )
            - 1
        ).label("turn"),
    ).subquery("by_project")
    weight = func.coalesce(project_flow.c.weight, 1)
    return (
        select(
            by_project.c.id,
            by_project.c.routing_key,
            by_project.c.project_id,
            by_project.c.queue,
        )
        .select_from(
            by_project.outerjoin(project_flow, project_flow.c.project_id == by_project.c.project_id)
        )
        .order_by(
            by_project.c.project_id.is_not(None),
            by_project.c.turn // weight,
            by_project.c.id,
        )
        .limit(limit)
    )


# Rows written since a pass last looked, oldest first: a project's first rows join the order.
NEWER = (
    select(outbox.c.id, outbox.c.routing_key, outbox.c.project_id, outbox.c.queue)
    .where(outbox.c.id > bindparam("after"))
    .order_by(outbox.c.id)
    .limit(bindparam("newer"))
)
LAST_ID = select(func.max(outbox.c.id))


class FairOrder:
    """The outbox's rows in fair order as this replica last read them (``fair_rows``, the
    next ``depth`` passes' worth). The read scans every waiting row, so it is made at most
    every ``refresh`` seconds, or less often where it takes more than ``share`` of the time.
    Between reads each pass looks at the rows written since (by the primary key: cheap): the
    rows of a (project, queue) the order does not hold go first, as its first round would
    have them; further rows of one it holds wait for the next read."""

    def __init__(self, *, refresh: float = 1.0, share: float = 0.1, depth: int = 4) -> None:
        self.refresh = refresh
        self.share = share
        self.depth = depth
        self._order: list[tuple[int, str]] = []  # (outbox id, ready queue)
        self._pairs: set[tuple[uuid.UUID, str]] = set()  # those with rows at the last read
        self._after = 0  # the newest row id looked at
        self._next_read = 0.0

    async def chosen(
        self,
        connection: AsyncConnection,
        statement: Any,
        parameters: dict[str, Any],
        limit: int,
        full: set[str],
    ) -> list[int]:
        """The ids a pass takes next: the first ``limit`` in fair order not of a ``full``
        ready queue (none: the order is used up till its next read)."""
        started = time.monotonic()
        if started >= self._next_read:
            self._after = int(await connection.scalar(LAST_ID) or 0)
            rows = (
                await connection.execute(statement, parameters | {"limit": limit * self.depth})
            ).all()
            self._order = [(row.id, row.routing_key) for row in rows]
            self._pairs = {(row.project_id, row.queue) for row in rows}
            took = time.monotonic() - started
            self._next_read = started + max(self.refresh, took / self.share)
        else:
            await self._join_newer(connection, limit)
        return [row_id for row_id, queue in self._order if queue not in full][:limit]

    async def _join_newer(self, connection: AsyncConnection, limit: int) -> None:
        rows = (await connection.execute(NEWER, {"after": self._after, "newer": limit})).all()
        if not rows:
            return
        self._after = rows[-1].id
        first: list[tuple[int, str]] = []
        for row in rows:
            pair = (row.project_id, row.queue)
            if row.project_id is None or pair in self._pairs:
                continue
            first.append((row.id, row.routing_key))
            self._pairs.add(pair)
        self._order[:0] = first

    def drop(self, ids: set[int]) -> None:
        """Forget rows a pass sent, left out or did not find."""
        self._order = [entry for entry in self._order if entry[0] not in ids]


class ProjectWeights:
    """The projects' weights other than 1, as this replica last read them (at most every
    ``refresh`` seconds: a weight set takes effect within that time)."""

    def __init__(self, *, refresh: float = 5.0) -> None:
        self.refresh = refresh
        self._weights: dict[uuid.UUID, int] = {}
        self._read_at: float | None = None

    async def read(self, connection: AsyncConnection) -> dict[uuid.UUID, int]:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.refresh:
            rows = await connection.execute(
                select(project_flow.c.project_id, project_flow.c.weight).where(
                    project_flow.c.weight != 1
                )
            )
            self._weights = {row[0]: int(row[1]) for row in rows}
            self._read_at = now
        return self._weights
