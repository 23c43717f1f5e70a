"""Read-only queries over the PostgreSQL job store (SQLAlchemy Core, asyncpg).

Every request reads inside one REPEATABLE READ, READ ONLY transaction so a page and its
count, or a job and its history, come from the same snapshot. Queries are constant in
number per request (no N+1) and filter/sort on the columns that ``jobstore.py`` indexes.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Float, Row, cast, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import dead_letters, job_attempts, job_events, jobs
from jobs_dashboard.domain import analytics as stats
from jobs_dashboard.domain.models import (
    DeadLetterInfo,
    JobAnalytics,
    JobAttempt,
    JobDetail,
    JobSummary,
    RuntimeStats,
    TimelineEntry,
)
from jobs_dashboard.domain.query import (
    CreatedRange,
    JobFilters,
    JobListQuery,
    SortDirection,
    Visibility,
    sort_column,
)

SUMMARY_COLUMNS = (
    jobs.c.id,
    jobs.c.type,
    jobs.c.priority,
    jobs.c.status,
    jobs.c.attempt,
    jobs.c.attempt_limit,
    jobs.c.submitted_by,
    jobs.c.created_at,
    jobs.c.updated_at,
    jobs.c.started_at,
    jobs.c.finished_at,
    jobs.c.last_error,
)
DETAIL_COLUMNS = (
    *SUMMARY_COLUMNS,
    jobs.c.payload,
    jobs.c.result,
    jobs.c.last_error_class,
    jobs.c.timeout_seconds,
    jobs.c.run_at,
    jobs.c.lease_expires_at,
    jobs.c.worker_id,
    jobs.c.trace_id,
)


AnyRow = Row[*tuple[Any, ...]]


@dataclass(frozen=True)
class JobRef:
    """What a command needs to know about a job before acting on it."""

    job_id: uuid.UUID
    status: str
    trace_id: str | None


def _summary_fields(row: AnyRow) -> dict[str, Any]:
    return {
        "job_id": row.id,
        "type": row.type,
        "priority": row.priority,
        "status": row.status,
        "attempt": row.attempt,
        "max_attempts": row.attempt_limit,
        "submitted_by": row.submitted_by,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "last_error": row.last_error,
    }


def visibility_conditions(visibility: Visibility) -> list[ColumnElement[bool]]:
    return [] if visibility.owner is None else [jobs.c.submitted_by == visibility.owner]


def created_conditions(created: CreatedRange) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if created.created_from is not None:
        conditions.append(jobs.c.created_at >= created.created_from)
    if created.created_to is not None:
        conditions.append(jobs.c.created_at < created.created_to)
    return conditions


def filter_conditions(filters: JobFilters) -> list[ColumnElement[bool]]:
    conditions = visibility_conditions(filters.visibility) + created_conditions(filters.created)
    if filters.statuses:
        conditions.append(jobs.c.status.in_([s.value for s in filters.statuses]))
    if filters.type is not None:
        conditions.append(jobs.c.type == filters.type)
    if filters.priority is not None:
        conditions.append(jobs.c.priority == filters.priority)
    return conditions


def order_by(query: JobListQuery) -> list[ColumnElement[Any]]:
    column = jobs.c[sort_column(query.sort_by)]
    if query.direction is SortDirection.ASC:
        return [column.asc(), jobs.c.id.asc()]
    return [column.desc(), jobs.c.id.desc()]


class JobReader:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as connection:
            snapshot = await connection.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
            async with snapshot.begin():
                yield snapshot

    async def ping(self) -> None:
        async with self.engine.connect() as connection:
            await connection.execute(select(1))

    async def list_jobs(self, query: JobListQuery) -> tuple[list[JobSummary], int]:
        """One page of jobs and the number of all jobs matching the filters."""
        conditions = filter_conditions(query.filters)
        async with self._snapshot() as connection:
            total = int(
                await connection.scalar(select(func.count()).select_from(jobs).where(*conditions))
                or 0
            )
            if total <= query.page.offset:
                return [], total
            rows = await connection.execute(
                select(*SUMMARY_COLUMNS)
                .where(*conditions)
                .order_by(*order_by(query))
                .limit(query.page.limit)
                .offset(query.page.offset)
            )
            return [JobSummary(**_summary_fields(row)) for row in rows], total

    async def job_ref(self, job_id: uuid.UUID, visibility: Visibility) -> JobRef | None:
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(jobs.c.id, jobs.c.status, jobs.c.trace_id).where(
                        jobs.c.id == job_id, *visibility_conditions(visibility)
                    )
                )
            ).first()
        return None if row is None else JobRef(row.id, row.status, row.trace_id)

    async def get_job(self, job_id: uuid.UUID, visibility: Visibility) -> JobDetail | None:
        """The job with its attempts, timeline and open dead letter; None if not visible."""
        async with self._snapshot() as connection:
            job = (
                await connection.execute(
                    select(*DETAIL_COLUMNS).where(
                        jobs.c.id == job_id, *visibility_conditions(visibility)
                    )
                )
            ).first()
            if job is None:
                return None
            attempts = await connection.execute(
                select(job_attempts)
                .where(job_attempts.c.job_id == job_id)
                .order_by(job_attempts.c.attempt)
            )
            events = await connection.execute(
                select(job_events).where(job_events.c.job_id == job_id).order_by(job_events.c.id)
            )
            dead = (
                await connection.execute(
                    select(dead_letters)
                    .where(dead_letters.c.job_id == job_id, dead_letters.c.resolved_at.is_(None))
                    .order_by(dead_letters.c.created_at.desc())
                    .limit(1)
                )
            ).first()
        return JobDetail(
            **_summary_fields(job),
            payload=job.payload,
            result=job.result,
            last_error_class=job.last_error_class,
            timeout_seconds=job.timeout_seconds,
            run_at=job.run_at,
            lease_expires_at=job.lease_expires_at,
            worker_id=job.worker_id,
            trace_id=job.trace_id,
            attempts=[_attempt(row) for row in attempts],
            timeline=[_timeline_entry(row) for row in events],
            dead_letter=None
            if dead is None
            else DeadLetterInfo(
                id=dead.id,
                reason=dead.reason,
                last_error=dead.last_error,
                created_at=dead.created_at,
            ),
        )

    async def analytics(self, visibility: Visibility, created: CreatedRange) -> JobAnalytics:
        """Counts by status/type/priority in one scan (GROUPING SETS) plus one aggregate row."""
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
                func.grouping_sets(
                    tuple_(jobs.c.status), tuple_(jobs.c.type), tuple_(jobs.c.priority)
                )
            )
        )
        aggregates = select(
            func.avg(duration_ms).filter(timed).label("mean_ms"),
            func.percentile_cont(0.95).within_group(duration_ms).filter(timed).label("p95_ms"),
            func.count()
            .filter(jobs.c.finished_at >= func.now() - timedelta(hours=1))
            .label("last_hour"),
        ).where(*conditions)
        async with self._snapshot() as connection:
            groups = (await connection.execute(grouped)).all()
            aggregate = (await connection.execute(aggregates)).one()
        by_status, by_type, by_priority = _split_groups(groups)
        return JobAnalytics(
            total=sum(by_status.values()),
            counts_by_status=stats.status_counts(by_status),
            counts_by_type=dict(sorted(by_type.items())),
            counts_by_priority=stats.priority_counts(by_priority),
            success_rate=stats.success_rate(by_status),
            runtime=RuntimeStats(
                mean_ms=_float(aggregate.mean_ms), p95_ms=_float(aggregate.p95_ms)
            ),
            throughput_last_hour=int(aggregate.last_hour),
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


def _dead_letter(row: AnyRow) -> DeadLetterInfo:
    return DeadLetterInfo(
        id=row.id, reason=row.reason, last_error=row.last_error, created_at=row.created_at
    )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _attempt(row: AnyRow) -> JobAttempt:
    return JobAttempt(
        attempt=row.attempt,
        status=row.status,
        worker_id=row.worker_id,
        dispatched_at=row.dispatched_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        duration_ms=row.duration_ms,
        error_class=row.error_class,
        error=row.error,
    )


def _timeline_entry(row: AnyRow) -> TimelineEntry:
    return TimelineEntry(
        from_status=row.from_status,
        to_status=row.to_status,
        reason=row.reason,
        attempt=row.attempt,
        at=row.at,
    )
