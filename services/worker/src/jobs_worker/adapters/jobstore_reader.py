"""Read-only queries over the job store for reports (a READ ONLY transaction each time)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, extract, func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import jobs
from jobs_worker.domain.report import CountRow, RuntimeStats


def _range_filter(lower: datetime | None, upper: datetime | None) -> ColumnElement[bool]:
    conditions: list[ColumnElement[bool]] = []
    if lower is not None:
        conditions.append(jobs.c.created_at >= lower)
    if upper is not None:
        conditions.append(jobs.c.created_at < upper)
    return and_(True, *conditions)


async def jobs_summary(
    engine: AsyncEngine, *, lower: datetime | None, upper: datetime | None
) -> tuple[list[CountRow], RuntimeStats]:
    """Counts by (status, type, priority) and the run time statistics of succeeded jobs,
    for jobs created in ``[lower, upper)``; one snapshot, read-only."""
    where = _range_filter(lower, upper)
    counts = (
        select(jobs.c.status, jobs.c.type, jobs.c.priority, func.count().label("n"))
        .where(where)
        .group_by(jobs.c.status, jobs.c.type, jobs.c.priority)
    )
    seconds = extract("epoch", jobs.c.finished_at - jobs.c.started_at)
    runtime = select(
        func.count().label("n"),
        func.avg(seconds).label("mean"),
        func.percentile_cont(0.95).within_group(seconds).label("p95"),
    ).where(
        where,
        jobs.c.status == JobStatus.SUCCEEDED.value,
        jobs.c.started_at.is_not(None),
        jobs.c.finished_at.is_not(None),
    )
    async with engine.connect() as connection, connection.begin():
        await connection.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"))
        rows = (await connection.execute(counts)).all()
        stats = (await connection.execute(runtime)).one()
    return (
        [CountRow(status=r.status, job_type=r.type, priority=r.priority, count=r.n) for r in rows],
        RuntimeStats(count=stats.n, mean_seconds=_float(stats.mean), p95_seconds=_float(stats.p95)),
    )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
