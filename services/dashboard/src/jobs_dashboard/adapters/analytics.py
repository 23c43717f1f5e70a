"""Job analytics, series and listing totals from the rollups (the scheduler's migrations 0009
and 0014).

Triggers on ``jobs`` keep job counts and succeeded runtimes by created minute, hour and day,
and finishes by finished minute (``jobs_common.jobstore.ROLLUPS``), through deltas the
scheduler folds in. A read adds the unfolded deltas and, for a created range that does not
start or end on a whole minute, scans the partial minutes in ``jobs``
(``domain.analytics.plan_spans``): in the caller's snapshot the answer equals a full count of
``jobs``, and its cost follows the number of rollup rows, not of jobs. Every rollup row has
its jobs' project and owner, so a read keeps the rows the caller may see as a read of ``jobs``
does (``adapters.store.visible``: the caller's projects, the one owner).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, select, union_all
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import Select

from jobs_common.contracts import TERMINAL_STATUSES, JobStatus
from jobs_common.jobstore import ROLLUPS, jobs
from jobs_common.queue_rows import UNFINISHED
from jobs_dashboard.adapters.store import Store, visible
from jobs_dashboard.domain import analytics as stats
from jobs_dashboard.domain.analytics import (
    DAY,
    EPOCH,
    HOUR,
    MINUTE,
    RuntimeBucket,
    Source,
    Span,
    ceil_to,
    plan_spans,
)
from jobs_dashboard.domain.models import JobAnalytics, JobSeries, RuntimeStats, SeriesBucket
from jobs_dashboard.domain.query import CreatedRange, Visibility

COUNTS, RUNTIMES, FINISHES = ROLLUPS["counts"], ROLLUPS["runtimes"], ROLLUPS["finishes"]
TERMINAL = [s.value for s in TERMINAL_STATUSES]


def visibility_conditions(visibility: Visibility) -> list[ColumnElement[bool]]:
    """The ``jobs`` rows ``visibility`` may read."""
    return visible(visibility, owner=jobs.c.submitted_by, project=jobs.c.project_id)


def visible_rows(table: Any, visibility: Visibility) -> list[ColumnElement[bool]]:
    """The rows of ``jobs`` or of a rollup table ``visibility`` may read. The rollups are
    keyed by project (migration 0014): a visibility narrowed to one submitter reads ``jobs``
    only (:func:`spans`)."""
    if table is jobs:
        return visibility_conditions(visibility)
    assert visibility.owner is None, "one submitter's figures come from jobs"
    if visibility.projects is None:
        return []
    return [table.c.project_id.in_(sorted(visibility.projects))]


def by_submitter(visibility: Visibility) -> bool:
    """Whether the figures are one submitter's (a ``submittedBy`` filter, or a caller the
    gateway did not scope): counted from ``jobs`` (``ix_jobs_owner_created``), since the
    rollups do not key by submitter."""
    return visibility.owner is not None


def spans(visibility: Visibility, created: CreatedRange) -> list[Span]:
    """Where a created range's figures come from: the rollups (``plan_spans``), or for one
    submitter one scan of ``jobs``."""
    start, end = created.created_from, created.created_to
    if not by_submitter(visibility):
        return plan_spans(start, end)
    if start is not None and end is not None and start >= end:
        return []
    return [Span(Source.JOBS, start, end)]


def created_conditions(created: CreatedRange) -> list[Any]:
    conditions: list[Any] = []
    if created.created_from is not None:
        conditions.append(jobs.c.created_at >= created.created_from)
    if created.created_to is not None:
        conditions.append(jobs.c.created_at < created.created_to)
    return conditions


@dataclass(frozen=True)
class CountFilter:
    """What the rollups can count by: visibility (projects, owner), created range, statuses,
    type, priority."""

    visibility: Visibility
    created: CreatedRange = field(default_factory=CreatedRange)
    statuses: tuple[str, ...] = ()
    type: str | None = None
    priority: int | None = None


def _conditions(table: Any, time_column: Any, span: Span, where: CountFilter) -> list[Any]:
    conditions = []
    if span.start is not None:
        conditions.append(time_column >= span.start)
    if span.end is not None:
        conditions.append(time_column < span.end)
    conditions.extend(visible_rows(table, where.visibility))
    if where.statuses:
        conditions.append(table.c.status.in_(where.statuses))
    if where.type is not None:
        conditions.append(table.c.type == where.type)
    if where.priority is not None:
        conditions.append(table.c.priority == where.priority)
    return conditions


def _span_counts(span: Span, where: CountFilter) -> Select[Any]:
    """(status, type, priority, jobs) rows of one span."""
    if span.source is Source.JOBS:
        return (
            select(jobs.c.status, jobs.c.type, jobs.c.priority, func.count().label("jobs"))
            .where(*_conditions(jobs, jobs.c.created_at, span, where))
            .group_by(jobs.c.status, jobs.c.type, jobs.c.priority)
        )
    table = COUNTS[span.source.value]
    return select(table.c.status, table.c.type, table.c.priority, table.c.jobs).where(
        *_conditions(table, table.c.bucket, span, where)
    )


def _span_runtimes(span: Span, visibility: Visibility) -> Select[Any]:
    """(runtime_bucket, jobs, runtime_ms) rows of one span."""
    where = CountFilter(visibility)
    if span.source is Source.JOBS:
        ms = func.job_runtime_ms(jobs.c.status, jobs.c.started_at, jobs.c.finished_at)
        bucket = func.job_runtime_bucket(ms)
        return (
            select(
                bucket.label("runtime_bucket"),
                func.count().label("jobs"),
                func.sum(ms).label("runtime_ms"),
            )
            .where(ms.is_not(None), *_conditions(jobs, jobs.c.created_at, span, where))
            .group_by(bucket)
        )
    table = RUNTIMES[span.source.value]
    return select(table.c.runtime_bucket, table.c.jobs, table.c.runtime_ms).where(
        *_conditions(table, table.c.bucket, span, where)
    )


@dataclass
class Counts:
    """Counted jobs by status, type and priority."""

    by_status: dict[str, int]
    by_type: dict[str, int]
    by_priority: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.by_status.values())


async def count_jobs(connection: AsyncConnection, where: CountFilter) -> Counts:
    """Exact counts of the jobs ``where`` selects, from the rollups (one statement)."""
    counts = Counts({}, {}, {})
    planned = spans(where.visibility, where.created)
    if not planned:
        return counts
    parts = union_all(*(_span_counts(span, where) for span in planned)).subquery()
    rows = await connection.execute(
        select(parts.c.status, parts.c.type, parts.c.priority, func.sum(parts.c.jobs).label("n"))
        .group_by(parts.c.status, parts.c.type, parts.c.priority)
        .having(func.sum(parts.c.jobs) != 0)
    )
    for row in rows:
        n = int(row.n)
        counts.by_status[row.status] = counts.by_status.get(row.status, 0) + n
        counts.by_type[row.type] = counts.by_type.get(row.type, 0) + n
        key = str(row.priority)
        counts.by_priority[key] = counts.by_priority.get(key, 0) + n
    return counts


async def runtimes(
    connection: AsyncConnection, visibility: Visibility, created: CreatedRange
) -> dict[int, RuntimeBucket]:
    """The succeeded jobs' runtimes by bucket (how many, their sum), from the rollups."""
    planned = spans(visibility, created)
    if not planned:
        return {}
    parts = union_all(*(_span_runtimes(span, visibility) for span in planned)).subquery()
    rows = await connection.execute(
        select(
            parts.c.runtime_bucket,
            func.sum(parts.c.jobs).label("jobs"),
            func.sum(parts.c.runtime_ms).label("runtime_ms"),
        )
        .group_by(parts.c.runtime_bucket)
        .having(func.sum(parts.c.jobs) != 0)
    )
    return {row.runtime_bucket: RuntimeBucket(int(row.jobs), float(row.runtime_ms)) for row in rows}


async def job_analytics(
    connection: AsyncConnection, visibility: Visibility, created: CreatedRange
) -> JobAnalytics:
    counts = await count_jobs(connection, CountFilter(visibility, created))
    timings = await runtimes(connection, visibility, created)
    timed = sum(b.jobs for b in timings.values())
    return JobAnalytics(
        total=counts.total,
        counts_by_status=stats.status_counts(counts.by_status),
        counts_by_type=dict(sorted(counts.by_type.items())),
        counts_by_priority=stats.priority_counts(counts.by_priority),
        success_rate=stats.success_rate(counts.by_status),
        runtime=RuntimeStats(
            mean_ms=sum(b.runtime_ms for b in timings.values()) / timed if timed else None,
            p95_ms=stats.runtime_percentile(timings, 0.95),
        ),
        throughput_last_hour=await finished_last_hour(connection, visibility),
    )


async def finished_last_hour(connection: AsyncConnection, visibility: Visibility) -> int:
    """The caller's jobs whose ``finished_at`` is within the last hour of the database clock,
    whenever they were created: ``job_finishes_minute`` (and its unfolded deltas) for the whole
    minutes, the jobs that finished in the partial first minute (``ix_jobs_finished``)."""
    now: datetime = (await connection.execute(select(func.now()))).scalar_one()
    since = now - timedelta(hours=1)
    visible_jobs = visibility_conditions(visibility)
    # One submitter's: the whole hour from jobs; else the whole minutes from the rollups.
    whole_minutes = now if by_submitter(visibility) else ceil_to(since, MINUTE)
    parts = [_finished(status, since, whole_minutes, *visible_jobs) for status in TERMINAL]
    if not by_submitter(visibility):
        parts += [
            select(func.coalesce(func.sum(table.c.jobs), 0).label("jobs")).where(
                table.c.bucket >= whole_minutes, *visible_rows(table, visibility)
            )
            for table in (FINISHES["minute"], FINISHES["delta"])
        ]
    every = union_all(*parts).subquery()
    return int(await connection.scalar(select(func.sum(every.c.jobs))) or 0)


def _finished(status: str, since: datetime, until: datetime, *where: Any) -> Select[Any]:
    """The jobs of one terminal status that finished in [since, until): one range of
    ``ix_jobs_finished (status, finished_at)`` (an IN over the statuses would scan all of it,
    the partial index's predicate making the status look already checked)."""
    return select(func.count().label("jobs")).where(
        jobs.c.status == status, jobs.c.finished_at >= since, jobs.c.finished_at < until, *where
    )


async def job_series(
    connection: AsyncConnection, visibility: Visibility, *, bucket_minutes: int, buckets: int
) -> JobSeries:
    """The jobs created in each of the last ``buckets`` windows, by status, from the coarsest
    rollups whose grain divides the window (day, hour or minute) plus the unfolded deltas;
    windows aligned on the database clock."""
    step = timedelta(minutes=bucket_minutes)
    now: datetime = (await connection.execute(select(func.now()))).scalar_one()
    last = EPOCH + ((now - EPOCH) // step) * step  # the window holding now
    first = last - (buckets - 1) * step
    grain = (
        "day" if step % DAY == timedelta(0) else "hour" if step % HOUR == timedelta(0) else "minute"
    )
    every = union_all(*_series_parts(visibility, step, first, grain)).subquery()
    rows = await connection.execute(
        select(every.c.start, every.c.status, func.sum(every.c.jobs).label("n")).group_by(
            every.c.start, every.c.status
        )
    )
    counts: dict[datetime, dict[str, int]] = {first + i * step: {} for i in range(buckets)}
    for row in rows:
        window = counts.get(row.start)
        if window is not None and row.n:
            window[row.status] = int(row.n)
    return JobSeries(
        bucket_minutes=bucket_minutes,
        buckets=[series_bucket(at, by_status) for at, by_status in counts.items()],
    )


def _series_parts(
    visibility: Visibility, step: timedelta, first: datetime, grain: str
) -> list[Select[Any]]:
    """(window start, status, jobs) rows from the rollups of ``grain`` and the deltas, or for
    one submitter from ``jobs``."""
    if by_submitter(visibility):
        start = func.date_bin(step, jobs.c.created_at, first)
        return [
            select(start.label("start"), jobs.c.status, func.count().label("jobs"))
            .where(jobs.c.created_at >= first, *visibility_conditions(visibility))
            .group_by(start, jobs.c.status)
        ]
    return [
        select(
            func.date_bin(step, table.c.bucket, first).label("start"), table.c.status, table.c.jobs
        ).where(table.c.bucket >= first, *visible_rows(table, visibility))
        for table in (COUNTS[grain], COUNTS["delta"])
    ]


def series_bucket(start: datetime, by_status: dict[str, int]) -> SeriesBucket:
    created = sum(by_status.values())
    ended = {s: by_status.get(s, 0) for s in ("succeeded", "dead", "cancelled")}
    return SeriesBucket(
        start=start, created=created, unfinished=created - sum(ended.values()), **ended
    )


UNFINISHED_STATUSES = [s.value for s in JobStatus if s.value not in TERMINAL]


class UnfinishedCounts(Store):
    async def now(self, visibility: Visibility) -> tuple[datetime, dict[str, int]]:
        """The database's clock and the caller's unfinished jobs by status, counted from
        ``jobs`` (``ix_jobs_queue_unfinished``: the backlog's size, not the history's), so a
        count of now waits neither for the rollups' fold nor for the console's refresh."""
        async with self.snapshot() as connection:
            now: datetime = (await connection.execute(select(func.now()))).scalar_one()
            rows = await connection.execute(
                select(jobs.c.status, func.count())
                .where(UNFINISHED, *visibility_conditions(visibility))
                .group_by(jobs.c.status)
            )
            counts = dict.fromkeys(UNFINISHED_STATUSES, 0)
            for status, n in rows:
                counts[status] = int(n)
            return now, counts
