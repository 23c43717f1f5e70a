"""Read-only queries over the job store for reports (a READ ONLY transaction each time)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, extract, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import jobs
from jobs_worker.domain.report import CountRow, RuntimeStats


@dataclass(frozen=True)
class ProjectSummary:
    """A report job's project and the counts of that project's jobs."""

    project_id: uuid.UUID
    rows: list[CountRow]
    runtime: RuntimeStats


def _scope(
    project_id: uuid.UUID, lower: datetime | None, upper: datetime | None
) -> ColumnElement[bool]:
    """The project's jobs created in ``[lower, upper)`` (``ix_jobs_project_created``)."""
    conditions: list[ColumnElement[bool]] = [jobs.c.project_id == project_id]
    if lower is not None:
        conditions.append(jobs.c.created_at >= lower)
    if upper is not None:
        conditions.append(jobs.c.created_at < upper)
    return and_(*conditions)


async def _summary(
    connection: AsyncConnection, where: ColumnElement[bool]
) -> tuple[list[CountRow], RuntimeStats]:
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
    rows = (await connection.execute(counts)).all()
    stats = (await connection.execute(runtime)).one()
    return (
        [CountRow(status=r.status, job_type=r.type, priority=r.priority, count=r.n) for r in rows],
        RuntimeStats(count=stats.n, mean_seconds=_float(stats.mean), p95_seconds=_float(stats.p95)),
    )


async def project_summary(
    engine: AsyncEngine, *, job_id: uuid.UUID, lower: datetime | None, upper: datetime | None
) -> ProjectSummary | None:
    """The project of the report job ``job_id`` (``jobs.project_id``) and, in the same
    snapshot, the counts by (status, type, priority) and the run time statistics of the
    succeeded jobs of that project created in ``[lower, upper)``. None if the job is not
    recorded."""
    async with engine.connect() as connection, connection.begin():
        await connection.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"))
        project = await connection.scalar(select(jobs.c.project_id).where(jobs.c.id == job_id))
        if project is None:
            return None
        rows, runtime = await _summary(connection, _scope(project, lower, upper))
    return ProjectSummary(project_id=project, rows=rows, runtime=runtime)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
