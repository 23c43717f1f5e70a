"""The charts' reads (docs/dashboard.md, "Charts") from the scheduler's chart rollups
(migration 0027), in one snapshot.

A range reads its grain's rows only: minute rows (``queue_minutes``, ``queue_sample_minutes``)
for up to a day, hour rows (``queue_hours``, ``queue_sample_hours``) for the hours summed
already plus the minute rows after them. The rows are per queue and minute or hour, so a
read's cost follows the queues and the range, never the jobs. The finishes of the minutes no
sample closed yet (from the newest taken minute on) are counted from ``jobs`` by
``ix_jobs_finished``: a minute or two of throughput."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, false, func, select, text, true
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import TERMINAL_STATUSES
from jobs_common.jobstore import (
    CHART_ALL_QUEUES,
    CHART_PLATFORM,
    jobs,
    queue_hours,
    queue_minutes,
    queue_sample_hours,
    queue_sample_minutes,
)
from jobs_dashboard.adapters.store import Store
from jobs_dashboard.domain.charts import RangePlan, WindowSums, first_window
from jobs_dashboard.domain.query import Visibility

HOUR = timedelta(hours=1)
PLATFORM = uuid.UUID(CHART_PLATFORM)
# Grouped by the window (the first column): its date_bin's parameters appear once.
FIRST_COLUMN = text("1")


@dataclass(frozen=True)
class ChartScope:
    """Whose rows a chart sums: the visible projects, optionally one queue of one project."""

    visibility: Visibility
    queue: tuple[uuid.UUID, str] | None = None

    def rows(self, table: Any) -> list[ColumnElement[bool]]:
        """The ``jobs`` rows in scope. The rollups are per project: a caller scoped to its own
        rows (none the gateway sends) reads none of them, nor of ``jobs`` here."""
        if self.visibility.owner is not None:
            return [false()]
        conditions: list[ColumnElement[bool]] = []
        if self.visibility.projects is not None:
            conditions.append(table.c.project_id.in_(sorted(self.visibility.projects)))
        if self.queue is not None:
            project_id, name = self.queue
            conditions += [table.c.project_id == project_id, table.c.queue == name]
        return conditions or [true()]

    def rollup_rows(self, table: Any) -> list[ColumnElement[bool]]:
        """The rollup rows in scope: one queue's, else the totals' rows (the platform's for a
        caller limited by no project, else each visible project's)."""
        if self.visibility.owner is not None:
            return [false()]
        if self.queue is not None:
            return self.rows(table)
        if self.visibility.projects is None:
            return [table.c.project_id == PLATFORM, table.c.queue == CHART_ALL_QUEUES]
        return [
            table.c.project_id.in_(sorted(self.visibility.projects)),
            table.c.queue == CHART_ALL_QUEUES,
        ]


class ChartStore(Store):
    async def windows(
        self, plan: RangePlan, scope: ChartScope
    ) -> tuple[datetime, dict[datetime, WindowSums]]:
        """The first window's start and every window's sums, oldest first."""
        async with self.snapshot() as connection:
            now: datetime = (await connection.execute(select(func.now()))).scalar_one()
            first = first_window(plan, now)
            sums = {first + i * plan.step: WindowSums() for i in range(plan.points)}
            cut = await _minutes_from(connection, plan, first)
            await _add_samples(connection, plan, first, cut, sums)
            await _add_queue_rows(connection, plan, first, cut, scope, sums)
            await _add_live_finishes(connection, plan, first, scope, sums)
            return first, sums


async def _minutes_from(connection: AsyncConnection, plan: RangePlan, first: datetime) -> datetime:
    """Where the minute rows take over: the range's start, or for an hour grain the end of
    the hours summed already."""
    if plan.grain == "minute":
        return first
    summed = await connection.scalar(
        select(func.max(queue_sample_hours.c.hour)).where(queue_sample_hours.c.hour >= first)
    )
    return first if summed is None else summed + HOUR


def _window(plan: RangePlan, column: Any, first: datetime) -> Any:
    return func.date_bin(plan.step, column, first).label("start")


async def _add_samples(
    connection: AsyncConnection,
    plan: RangePlan,
    first: datetime,
    cut: datetime,
    sums: dict[datetime, WindowSums],
) -> None:
    minutes, hours = queue_sample_minutes, queue_sample_hours
    parts = [
        select(
            _window(plan, minutes.c.minute, first),
            func.count().label("sampled"),
            func.count(minutes.c.workers).label("worker_minutes"),
            func.coalesce(func.sum(minutes.c.busy_slots), 0).label("busy"),
            func.coalesce(func.sum(minutes.c.slots), 0).label("slots"),
        )
        .where(minutes.c.minute >= cut)
        .group_by(FIRST_COLUMN)
    ]
    if cut > first:
        parts.append(
            select(
                _window(plan, hours.c.hour, first),
                func.sum(hours.c.minutes).label("sampled"),
                func.sum(hours.c.worker_minutes).label("worker_minutes"),
                func.sum(hours.c.busy_slots).label("busy"),
                func.sum(hours.c.slots).label("slots"),
            )
            .where(hours.c.hour >= first, hours.c.hour < cut)
            .group_by(FIRST_COLUMN)
        )
    for part in parts:
        for row in await connection.execute(part):
            window = sums.get(row.start)
            if window is None:
                continue
            window.minutes_sampled += int(row.sampled)
            window.worker_minutes += int(row.worker_minutes)
            window.busy_slots += int(row.busy)
            window.slots += int(row.slots)


async def _add_queue_rows(
    connection: AsyncConnection,
    plan: RangePlan,
    first: datetime,
    cut: datetime,
    scope: ChartScope,
    sums: dict[datetime, WindowSums],
) -> None:
    parts: list[tuple[Any, Any, datetime, datetime | None]] = [
        (queue_minutes, queue_minutes.c.minute, cut, None)
    ]
    if cut > first:
        parts.append((queue_hours, queue_hours.c.hour, first, cut))
    for table, time, start, end in parts:
        bounds = [time >= start] + ([] if end is None else [time < end])
        statement = (
            select(
                _window(plan, time, first),
                table.c.priority,
                func.sum(table.c.waiting).label("waiting"),
                func.sum(table.c.running).label("running"),
                func.max(table.c.oldest_wait_seconds).label("longest_wait"),
                func.sum(table.c.succeeded).label("succeeded"),
                func.sum(table.c.dead).label("dead"),
                func.sum(table.c.cancelled).label("cancelled"),
            )
            .where(*bounds, *scope.rollup_rows(table))
            .group_by(FIRST_COLUMN, table.c.priority)
        )
        for row in await connection.execute(statement):
            window = sums.get(row.start)
            if window is None:
                continue
            window.add_queue_row(
                priority=int(row.priority),
                waiting=int(row.waiting),
                running=int(row.running),
                longest_wait=float(row.longest_wait),
            )
            for status in ("succeeded", "dead", "cancelled"):
                window.add_finished(status, int(getattr(row, status)))


async def _add_live_finishes(
    connection: AsyncConnection,
    plan: RangePlan,
    first: datetime,
    scope: ChartScope,
    sums: dict[datetime, WindowSums],
) -> None:
    """The finishes no sample closed yet: from the newest minute taken (its finishes close
    with the next one), or the range's start when none was taken in it."""
    newest = await connection.scalar(
        select(func.max(queue_sample_minutes.c.minute)).where(
            queue_sample_minutes.c.minute >= first
        )
    )
    since = first if newest is None else newest
    for status in TERMINAL_STATUSES:
        # one range of ix_jobs_finished (status, finished_at) per status
        statement = (
            select(_window(plan, jobs.c.finished_at, first), func.count().label("jobs"))
            .where(
                jobs.c.status == status.value,
                jobs.c.finished_at >= since,
                *scope.rows(jobs),
            )
            .group_by(FIRST_COLUMN)
        )
        for row in await connection.execute(statement):
            window = sums.get(row.start)
            if window is not None:
                window.add_finished(status.value, int(row.jobs))
