"""Job analytics: counts by status/type/priority in one scan plus one aggregate row."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Float, cast, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import jobs
from jobs_dashboard.adapters.store import AnyRow
from jobs_dashboard.domain import analytics as stats
from jobs_dashboard.domain.models import JobAnalytics, JobSeries, RuntimeStats, SeriesBucket
from jobs_dashboard.domain.query import CreatedRange, Visibility

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # windows are aligned on multiples of their length


def visibility_conditions(visibility: Visibility) -> list[Any]:
    return [] if visibility.owner is None else [jobs.c.submitted_by == visibility.owner]


def created_conditions(created: CreatedRange) -> list[Any]:
    conditions: list[Any] = []
    if created.created_from is not None:
        conditions.append(jobs.c.created_at >= created.created_from)
    if created.created_to is not None:
        conditions.append(jobs.c.created_at < created.created_to)
    return conditions


async def job_analytics(
    connection: AsyncConnection, visibility: Visibility, created: CreatedRange
) -> JobAnalytics:
    """Counts by status/type/priority (GROUPING SETS) plus one aggregate row."""
    conditions = visibility_conditions(visibility) + created_conditions(created)
    succeeded = jobs.c.status == JobStatus.SUCCEEDED.value
    timed = succeeded & jobs.c.started_at.is_not(None) & jobs.c.finished_at.is_not(None)
    duration_ms = cast(func.extract("epoch", jobs.c.finished_at - jobs.c.started_at), Float) * (
        1000.0
    )
    grouped = (
        select(jobs.c.status, jobs.c.type, jobs.c.priority, func.count().label("n"))
        .where(*conditions)
        .group_by(
            func.grouping_sets(tuple_(jobs.c.status), tuple_(jobs.c.type), tuple_(jobs.c.priority))
        )
    )
    aggregates = select(
        func.avg(duration_ms).filter(timed).label("mean_ms"),
        func.percentile_cont(0.95).within_group(duration_ms).filter(timed).label("p95_ms"),
        func.count()
        .filter(jobs.c.finished_at >= func.now() - timedelta(hours=1))
        .label("last_hour"),
    ).where(*conditions)
    groups = (await connection.execute(grouped)).all()
    aggregate = (await connection.execute(aggregates)).one()
    by_status, by_type, by_priority = _split_groups(groups)
    return JobAnalytics(
        total=sum(by_status.values()),
        counts_by_status=stats.status_counts(by_status),
        counts_by_type=dict(sorted(by_type.items())),
        counts_by_priority=stats.priority_counts(by_priority),
        success_rate=stats.success_rate(by_status),
        runtime=RuntimeStats(mean_ms=_float(aggregate.mean_ms), p95_ms=_float(aggregate.p95_ms)),
        throughput_last_hour=int(aggregate.last_hour),
    )


async def job_series(
    connection: AsyncConnection, visibility: Visibility, *, bucket_minutes: int, buckets: int
) -> JobSeries:
    """One grouped scan of the jobs created in the last ``buckets`` windows (``ix_jobs_created``,
    or ``ix_jobs_owner_created`` for one owner), windows aligned on the database clock."""
    step = timedelta(minutes=bucket_minutes)
    now: datetime = (await connection.execute(select(func.now()))).scalar_one()
    last = EPOCH + ((now - EPOCH) // step) * step  # the window holding now
    first = last - (buckets - 1) * step
    start = func.date_bin(step, jobs.c.created_at, first).label("start")
    rows = await connection.execute(
        select(start, jobs.c.status, func.count().label("n"))
        .where(jobs.c.created_at >= first, *visibility_conditions(visibility))
        .group_by(start, jobs.c.status)
    )
    counts: dict[datetime, dict[str, int]] = {first + i * step: {} for i in range(buckets)}
    for row in rows:
        window = counts.get(row.start)
        if window is not None:
            window[row.status] = int(row.n)
    return JobSeries(
        bucket_minutes=bucket_minutes,
        buckets=[series_bucket(at, by_status) for at, by_status in counts.items()],
    )


def series_bucket(start: datetime, by_status: dict[str, int]) -> SeriesBucket:
    created = sum(by_status.values())
    ended = {s: by_status.get(s, 0) for s in ("succeeded", "dead", "cancelled")}
    return SeriesBucket(
        start=start, created=created, unfinished=created - sum(ended.values()), **ended
    )


def _split_groups(
    groups: Sequence[AnyRow],
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """GROUPING SETS rows carry exactly one non-null key (the job columns are NOT NULL)."""
    by_status: dict[str, int] = {}
    by_type: dict[str, int] = {}
    by_priority: dict[str, int] = {}
    for row in groups:
        if row.status is not None:
            by_status[row.status] = int(row.n)
        elif row.type is not None:
            by_type[row.type] = int(row.n)
        elif row.priority is not None:
            by_priority[str(row.priority)] = int(row.n)
    return by_status, by_type, by_priority


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
