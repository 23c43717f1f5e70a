"""The relay's flow control (``domain/flow_control.py``): each pass locks the limited queues
that have dispatches waiting in the outbox (``FOR UPDATE``, in id order, until the pass
commits: a relay of another replica waits, then counts what this one sent), counts their
jobs in flight (by their key's value too), refills their buckets, and after publishing takes
the tokens it spent. A limited queue whose first dispatches committed between that query and
the pass's lock of the outbox rows is locked and counted then (``late_budgets``).

A project with a most running (``project_flow.max_running``) is treated alike: its row is
locked after the queues' (in project order: every pass takes the locks in that order), its jobs
in flight counted across its queues (``project_slots``, ``late_project_slots``).

Which queues are limited is read at most every ``refresh`` seconds per replica: with none
anywhere a pass pays nothing, and a limit set takes effect within that time."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, exists, func, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import jobs, outbox, project_flow, queues
from jobs_common.queue_rows import UNFINISHED
from jobs_scheduler.adapters.jobs import SENT
from jobs_scheduler.domain.flow_control import Budget, KeyLimit, Pair, refilled

LIMITED = or_(
    queues.c.max_concurrency.is_not(None),
    queues.c.rate_limit.is_not(None),
    queues.c.concurrency_key.is_not(None),
)
LIMITED_PAIRS = select(queues.c.project_id, queues.c.name).where(LIMITED)
# The limited queues (not paused: the pause gate holds those), locked; with dispatches in the
# outbox, or among a pass's rows.
LIMITED_AMONG = (
    select(
        queues.c.id,
        queues.c.project_id,
        queues.c.name,
        queues.c.max_concurrency,
        queues.c.rate_limit,
        queues.c.rate_per_seconds,
        queues.c.rate_tokens,
        queues.c.concurrency_key,
        queues.c.concurrency_key_limit,
        queues.c.rate_refilled_at,
    )
    .where(LIMITED, ~queues.c.paused)
    .order_by(queues.c.id)
    .with_for_update(of=queues)
)
LIMITED_WAITING = LIMITED_AMONG.where(
    exists().where(outbox.c.project_id == queues.c.project_id, outbox.c.queue == queues.c.name)
)
LIMITED_PROJECTS = select(project_flow.c.project_id).where(project_flow.c.max_running.is_not(None))
PROJECTS_LIMITED_AMONG = (
    select(project_flow.c.project_id, project_flow.c.max_running)
    .where(project_flow.c.max_running.is_not(None))
    .order_by(project_flow.c.project_id)
    .with_for_update(of=project_flow)
)
PROJECTS_LIMITED_WAITING = PROJECTS_LIMITED_AMONG.where(
    exists().where(outbox.c.project_id == project_flow.c.project_id, outbox.c.queue.is_not(None))
)
# In flight: running, or queued with its ready message sent. A job whose lease ran out is no
# longer running: its slot is free.
IN_FLIGHT = and_(UNFINISHED, or_(jobs.c.status == "running", SENT))


async def in_flight(connection: AsyncConnection, pairs: list[Pair]) -> dict[Pair, int]:
    rows = await connection.execute(
        select(jobs.c.project_id, jobs.c.queue, func.count())
        .where(
            IN_FLIGHT,
            tuple_(jobs.c.project_id, jobs.c.queue).in_(pairs),
        )
        .group_by(jobs.c.project_id, jobs.c.queue)
    )
    return {(row[0], row[1]): int(row[2]) for row in rows}


async def in_flight_by_project(
    connection: AsyncConnection, projects: list[uuid.UUID]
) -> dict[uuid.UUID, int]:
    rows = await connection.execute(
        select(jobs.c.project_id, func.count())
        .where(IN_FLIGHT, jobs.c.project_id.in_(projects))
        .group_by(jobs.c.project_id)
    )
    return {row[0]: int(row[1]) for row in rows}


async def in_flight_by_value(connection: AsyncConnection, pair: Pair, field: str) -> dict[str, int]:
    """The jobs in flight of a keyed queue per value of its key (those that have one)."""
    value = jobs.c.payload[field].astext
    rows = await connection.execute(
        select(value, func.count())
        .where(
            IN_FLIGHT,
            jobs.c.project_id == pair[0],
            jobs.c.queue == pair[1],
            value.is_not(None),
        )
        .group_by(value)
    )
    return {str(row[0]): int(row[1]) for row in rows}


class FlowControl:
    """One replica's view of which queues and projects are limited (re-read at most every
    ``refresh`` seconds), and each pass's budgets."""

    def __init__(self, *, refresh: float = 0.25) -> None:
        self.refresh = refresh
        self._limited: frozenset[Pair] = frozenset()
        self._limited_projects: frozenset[uuid.UUID] = frozenset()
        self._read_at: float | None = None

    async def limited(self, connection: AsyncConnection) -> frozenset[Pair]:
        await self._refresh(connection)
        return self._limited

    async def _refresh(self, connection: AsyncConnection) -> None:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.refresh:
            rows = await connection.execute(LIMITED_PAIRS)
            self._limited = frozenset((row[0], row[1]) for row in rows)
            projects = await connection.execute(LIMITED_PROJECTS)
            self._limited_projects = frozenset(row[0] for row in projects)
            self._read_at = now

    async def project_slots(self, connection: AsyncConnection) -> dict[uuid.UUID, int]:
        """The slots each limited project with waiting dispatches has left (``max_running``
        minus its jobs in flight), its row locked until the pass's transaction ends. Called
        after :meth:`budgets`, which locks the queues' rows first."""
        if not self._limited_projects:
            return {}
        return await self._project_slots(connection, PROJECTS_LIMITED_WAITING)

    async def late_project_slots(
        self, connection: AsyncConnection, pairs: set[Pair], slots: Mapping[uuid.UUID, int]
    ) -> dict[uuid.UUID, int]:
        """As :meth:`late_budgets`, for the limited projects among ``pairs``."""
        late = sorted(({pair[0] for pair in pairs} & self._limited_projects) - slots.keys())
        if not late:
            return {}
        return await self._project_slots(
            connection, PROJECTS_LIMITED_AMONG.where(project_flow.c.project_id.in_(late))
        )

    async def _project_slots(
        self, connection: AsyncConnection, statement: Any
    ) -> dict[uuid.UUID, int]:
        limits = {row[0]: int(row[1]) for row in await connection.execute(statement)}
        if not limits:
            return {}
        running = await in_flight_by_project(connection, sorted(limits))
        return {
            project: max(0, limit - running.get(project, 0)) for project, limit in limits.items()
        }

    async def budgets(self, connection: AsyncConnection) -> dict[Pair, Budget]:
        """The budget of each limited queue with waiting dispatches, its row locked until the
        pass's transaction ends."""
        if not await self.limited(connection):
            return {}
        return await self._budgets(connection, LIMITED_WAITING)

    async def late_budgets(
        self, connection: AsyncConnection, pairs: set[Pair], budgets: Mapping[Pair, Budget]
    ) -> dict[Pair, Budget]:
        """The budgets of the limited queues among ``pairs`` (a pass's rows) that
        :meth:`budgets` did not see: their first dispatches committed between its query and
        the pass's lock of the outbox rows."""
        late = sorted((pairs & self._limited) - budgets.keys())
        if not late:
            return {}
        return await self._budgets(
            connection, LIMITED_AMONG.where(tuple_(queues.c.project_id, queues.c.name).in_(late))
        )

    async def _budgets(self, connection: AsyncConnection, statement: Any) -> dict[Pair, Budget]:
        rows = (await connection.execute(statement)).all()
        if not rows:
            return {}
        # Read once the rows are locked (another replica's pass may have refilled them while
        # this one waited), and written back as the refill's time: never a time before it.
        at = await connection.scalar(select(func.clock_timestamp()))
        capped = [(row.project_id, row.name) for row in rows if row.max_concurrency is not None]
        running = await in_flight(connection, capped) if capped else {}
        budgets: dict[Pair, Budget] = {}
        for row in rows:
            pair = (row.project_id, row.name)
            elapsed = (
                0.0 if row.rate_refilled_at is None else (at - row.rate_refilled_at).total_seconds()
            )
            tokens = (
                None
                if row.rate_limit is None
                else refilled(
                    row.rate_tokens,
                    limit=row.rate_limit,
                    per_seconds=row.rate_per_seconds,
                    elapsed=elapsed,
                )
            )
            key = (
                None
                if row.concurrency_key is None
                else KeyLimit(
                    row.concurrency_key,
                    row.concurrency_key_limit,
                    await in_flight_by_value(connection, pair, row.concurrency_key),
                )
            )
            budgets[pair] = Budget.of(
                row.id,
                at=at,
                max_concurrency=row.max_concurrency,
                in_flight=running.get(pair, 0),
                tokens=tokens,
                key=key,
            )
        return budgets

    async def spend(
        self, connection: AsyncConnection, budgets: Mapping[Pair, Budget], sent: Counter[Pair]
    ) -> None:
        """Take the tokens of the dispatches sent from their queues' buckets."""
        for pair, count in sorted(sent.items()):
            budget = budgets.get(pair)
            if budget is None or budget.tokens is None or not count:
                continue
            await connection.execute(
                update(queues)
                .where(queues.c.id == budget.queue_id)
                .values(rate_tokens=max(0.0, budget.tokens - count), rate_refilled_at=budget.at)
            )
