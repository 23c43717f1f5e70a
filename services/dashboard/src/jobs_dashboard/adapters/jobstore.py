"""Reads of jobs: list, detail, command references, log lines (SQLAlchemy Core, asyncpg).

Queries are constant in number per request (no N+1) and filter/sort on the columns that
``jobstore.py`` indexes.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, literal, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import (
    dead_letters,
    job_attempts,
    job_dependencies,
    job_events,
    job_logs,
    jobs,
)
from jobs_dashboard.adapters.analytics import (
    CountFilter,
    count_jobs,
    created_conditions,
    job_analytics,
    job_series,
    visibility_conditions,
)
from jobs_dashboard.adapters.job_search import search_condition
from jobs_dashboard.adapters.store import AnyRow, Store
from jobs_dashboard.domain.job_errors import latest_error
from jobs_dashboard.domain.models import (
    CHILDREN_LIMIT,
    ChildJob,
    DeadLetterInfo,
    EffectivePolicy,
    JobAnalytics,
    JobAttempt,
    JobDetail,
    JobProgress,
    JobSeries,
    JobSummary,
    LogLine,
    ParentJob,
    TimelineEntry,
)
from jobs_dashboard.domain.query import (
    CreatedRange,
    Cursor,
    JobFilters,
    JobListQuery,
    SortDirection,
    Visibility,
    sort_key,
)
from jobs_dashboard.domain.search import COUNT_LIMIT

SUMMARY_COLUMNS = (
    jobs.c.id,
    jobs.c.type,
    jobs.c.priority,
    jobs.c.status,
    jobs.c.attempt,
    jobs.c.attempt_limit,
    jobs.c.submitted_by,
    jobs.c.project_id,
    jobs.c.created_at,
    jobs.c.updated_at,
    jobs.c.started_at,
    jobs.c.finished_at,
    jobs.c.last_error,
    jobs.c.last_error_class,
    jobs.c.schedule_id,
    jobs.c.batch_id,
    jobs.c.run_at,
    jobs.c.cancel_requested_at,
    jobs.c.retry_policy,
)
DETAIL_COLUMNS = (
    *SUMMARY_COLUMNS,
    jobs.c.payload,
    jobs.c.result,
    jobs.c.timeout_seconds,
    jobs.c.lease_expires_at,
    jobs.c.queued_at,
    jobs.c.deadline_at,
    jobs.c.lost_count,
    jobs.c.cancel_requested_by,
    jobs.c.waiting_reason,
    jobs.c.worker_id,
    jobs.c.trace_id,
    jobs.c.progress,
)


@dataclass(frozen=True)
class JobRef:
    """What a command needs to know about a job before acting on it."""

    job_id: uuid.UUID
    status: str
    trace_id: str | None
    type: str = ""
    cancel_requested_at: datetime | None = None
    project_id: uuid.UUID | None = None


def _policy(value: Any) -> EffectivePolicy | None:
    if not isinstance(value, dict):
        return None
    try:
        return EffectivePolicy.model_validate(value)
    except ValidationError:  # written by the scheduler; show nothing rather than fail the page
        return None


def _summary_fields(
    row: AnyRow, depends_on: Sequence[uuid.UUID], errored_attempt: int | None = None
) -> dict[str, Any]:
    """``errored_attempt``: the job's highest attempt whose row holds an error."""
    return {
        "job_id": row.id,
        "type": row.type,
        "priority": row.priority,
        "status": row.status,
        "attempt": row.attempt,
        "max_attempts": row.attempt_limit,
        "submitted_by": row.submitted_by,
        "project_id": row.project_id,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "last_error": row.last_error,
        "latest_error": latest_error(
            status=JobStatus(row.status),
            attempt=row.attempt,
            message=row.last_error,
            error_class=row.last_error_class,
            errored_attempt=errored_attempt,
        ),
        "schedule_id": row.schedule_id,
        "batch_id": row.batch_id,
        "run_at": row.run_at,
        "depends_on": list(depends_on),
        "cancel_requested_at": row.cancel_requested_at,
        "retry_policy": _policy(row.retry_policy),
    }


def filter_conditions(filters: JobFilters) -> list[ColumnElement[bool]]:
    conditions = visibility_conditions(filters.visibility) + created_conditions(filters.created)
    if filters.statuses:
        conditions.append(jobs.c.status.in_([s.value for s in filters.statuses]))
    if filters.type is not None:
        conditions.append(jobs.c.type == filters.type)
    if filters.priority is not None:
        conditions.append(jobs.c.priority == filters.priority)
    # An id prefix is a range of the column's index (a whole id: a range of one).
    if filters.schedule_id is not None:
        conditions.append(jobs.c.schedule_id.between(*filters.schedule_id.bounds))
    if filters.batch_id is not None:
        conditions.append(jobs.c.batch_id.between(*filters.batch_id.bounds))
    if filters.search is not None:
        conditions.append(search_condition(filters.search))
    return conditions


def order_by(query: JobListQuery) -> list[ColumnElement[Any]]:
    columns = [jobs.c[name] for name in sort_key(query.sort_by)]
    if query.direction is SortDirection.ASC:
        return [column.asc() for column in columns]
    return [column.desc() for column in columns]


def after_cursor(cursor: Cursor) -> list[ColumnElement[bool]]:
    """The rows past the cursor's in its order: a row comparison on the sort key, with the
    leading column bounded on its own too so the index's range starts there."""
    columns = [jobs.c[name] for name in sort_key(cursor.sort_by)]
    key, first = tuple_(*columns), columns[0]
    values = tuple_(*(literal(v, c.type) for v, c in zip(cursor.after, columns, strict=True)))
    if cursor.direction is SortDirection.ASC:
        return [first >= cursor.after[0], key > values]
    return [first <= cursor.after[0], key < values]


def next_cursor(query: JobListQuery, last: AnyRow) -> str:
    return Cursor(
        query.sort_by,
        query.direction,
        tuple(getattr(last, name) for name in sort_key(query.sort_by)),
        query.page.page_number + 1,
    ).encode()


async def count_matching(
    connection: AsyncConnection, filters: JobFilters, conditions: list[ColumnElement[bool]]
) -> int:
    """The number of jobs the filters select: from the rollups (``adapters/analytics.py``),
    or, filtered by a batch, a schedule or a search, a count over that one's own index; a
    search's counted up to ``COUNT_LIMIT + 1`` (more: the caller says the total is capped)."""
    if filters.schedule_id is None and filters.batch_id is None and filters.search is None:
        counts = await count_jobs(
            connection,
            CountFilter(
                visibility=filters.visibility,
                created=filters.created,
                statuses=tuple(s.value for s in filters.statuses),
                type=filters.type,
                priority=filters.priority,
            ),
        )
        return counts.total
    if filters.search is not None:
        matching = select(literal(1)).where(*conditions).limit(COUNT_LIMIT + 1).subquery()
        return int(await connection.scalar(select(func.count()).select_from(matching)) or 0)
    return int(
        await connection.scalar(select(func.count()).select_from(jobs).where(*conditions)) or 0
    )


async def errored_attempts(
    connection: AsyncConnection, job_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, int]:
    """Per job, its highest attempt whose row holds an error (the attempts' primary key)."""
    if not job_ids:
        return {}
    rows = await connection.execute(
        select(job_attempts.c.job_id, func.max(job_attempts.c.attempt).label("attempt"))
        .where(
            job_attempts.c.job_id.in_(job_ids),
            or_(job_attempts.c.error.is_not(None), job_attempts.c.error_class.is_not(None)),
        )
        .group_by(job_attempts.c.job_id)
    )
    return {row.job_id: row.attempt for row in rows}


class JobReader(Store):
    async def list_jobs(self, query: JobListQuery) -> tuple[list[JobSummary], int, str | None]:
        """One page of jobs, the number of all jobs matching the filters and the cursor of
        the next page (None on the last)."""
        conditions = filter_conditions(query.filters)
        async with self.snapshot() as connection:
            total = await count_matching(connection, query.filters, conditions)
            page = select(*SUMMARY_COLUMNS).order_by(*order_by(query)).limit(query.page.limit + 1)
            if query.cursor is not None:
                page = page.where(*conditions, *after_cursor(query.cursor))
            elif total <= query.page.offset:
                return [], total, None
            else:
                page = page.where(*conditions).offset(query.page.offset)
            rows = (await connection.execute(page)).all()
            more = len(rows) > query.page.limit
            rows = rows[: query.page.limit]
            parents: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
            errored = await errored_attempts(
                connection, [row.id for row in rows if row.last_error or row.last_error_class]
            )
            if rows:
                found = await connection.execute(
                    select(job_dependencies)
                    .where(job_dependencies.c.job_id.in_([row.id for row in rows]))
                    .order_by(job_dependencies.c.job_id, job_dependencies.c.depends_on)
                )
                for dependency in found:
                    parents[dependency.job_id].append(dependency.depends_on)
        summaries = [
            JobSummary(**_summary_fields(row, parents[row.id], errored.get(row.id))) for row in rows
        ]
        return summaries, total, next_cursor(query, rows[-1]) if more else None

    async def job_ref(self, job_id: uuid.UUID, visibility: Visibility) -> JobRef | None:
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(
                        jobs.c.id,
                        jobs.c.status,
                        jobs.c.trace_id,
                        jobs.c.type,
                        jobs.c.cancel_requested_at,
                        jobs.c.project_id,
                    ).where(jobs.c.id == job_id, *visibility_conditions(visibility))
                )
            ).first()
        if row is None:
            return None
        return JobRef(
            row.id, row.status, row.trace_id, row.type, row.cancel_requested_at, row.project_id
        )

    async def job_status(self, job_id: uuid.UUID) -> str | None:
        async with self.engine.connect() as connection:
            status: str | None = await connection.scalar(
                select(jobs.c.status).where(jobs.c.id == job_id)
            )
        return status

    async def get_job(self, job_id: uuid.UUID, visibility: Visibility) -> JobDetail | None:
        """The job with its attempts, timeline, parents and open dead letter; None if hidden."""
        async with self.snapshot() as connection:
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
            parents = (
                await connection.execute(
                    select(job_dependencies.c.depends_on, jobs.c.status)
                    .select_from(
                        job_dependencies.outerjoin(jobs, jobs.c.id == job_dependencies.c.depends_on)
                    )
                    .where(job_dependencies.c.job_id == job_id)
                    .order_by(job_dependencies.c.depends_on)
                )
            ).all()
            children = (
                await connection.execute(
                    select(
                        jobs.c.id, jobs.c.type, jobs.c.status, func.count().over().label("total")
                    )
                    .select_from(
                        job_dependencies.join(jobs, jobs.c.id == job_dependencies.c.job_id)
                    )
                    .where(
                        job_dependencies.c.depends_on == job_id, *visibility_conditions(visibility)
                    )
                    .order_by(jobs.c.created_at, jobs.c.id)
                    .limit(CHILDREN_LIMIT)
                )
            ).all()
        attempt_rows = [_attempt(row) for row in attempts]
        return JobDetail(
            **_summary_fields(
                job,
                [parent.depends_on for parent in parents],
                max((a.attempt for a in attempt_rows if a.error or a.error_class), default=None),
            ),
            payload=job.payload,
            result=job.result,
            last_error_class=job.last_error_class,
            timeout_seconds=job.timeout_seconds,
            lease_expires_at=job.lease_expires_at,
            queued_at=job.queued_at,
            deadline_at=job.deadline_at,
            lost_count=job.lost_count,
            cancel_requested_by=job.cancel_requested_by,
            waiting_reason=job.waiting_reason if job.status == "queued" else None,
            worker_id=job.worker_id,
            trace_id=job.trace_id,
            progress=current_progress(job),
            parents=[ParentJob(job_id=p.depends_on, status=p.status) for p in parents],
            children=[ChildJob(job_id=c.id, job_type=c.type, status=c.status) for c in children],
            children_total=children[0].total if children else 0,
            attempts=attempt_rows,
            timeline=[_timeline_entry(row) for row in events],
            dead_letter=None if dead is None else _dead_letter(dead),
        )

    async def job_logs(
        self, job_id: uuid.UUID, visibility: Visibility, *, after_id: int, limit: int
    ) -> list[LogLine] | None:
        """Log lines with id > ``after_id`` in id order; None when the job is not visible."""
        async with self.snapshot() as connection:
            visible = await connection.scalar(
                select(jobs.c.id).where(jobs.c.id == job_id, *visibility_conditions(visibility))
            )
            if visible is None:
                return None
            rows = await connection.execute(
                select(job_logs)
                .where(job_logs.c.job_id == job_id, job_logs.c.id > after_id)
                .order_by(job_logs.c.id)
                .limit(limit)
            )
            return [
                LogLine(
                    id=row.id,
                    attempt=row.attempt,
                    worker_id=row.worker_id,
                    level=row.level,
                    message=row.message,
                    at=row.at,
                )
                for row in rows
            ]

    async def analytics(self, visibility: Visibility, created: CreatedRange) -> JobAnalytics:
        async with self.snapshot() as connection:
            return await job_analytics(connection, visibility, created)

    async def series(
        self, visibility: Visibility, *, bucket_minutes: int, buckets: int
    ) -> JobSeries:
        async with self.snapshot() as connection:
            return await job_series(
                connection, visibility, bucket_minutes=bucket_minutes, buckets=buckets
            )


def _dead_letter(row: AnyRow) -> DeadLetterInfo:
    return DeadLetterInfo(
        id=row.id, reason=row.reason, last_error=row.last_error, created_at=row.created_at
    )


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


def current_progress(job: Any) -> JobProgress | None:
    """The progress of the attempt running now; an earlier attempt's is not shown."""
    progress = job.progress
    if job.status != "running" or not progress or progress.get("attempt") != job.attempt:
        return None
    return JobProgress(percent=progress["percent"], message=progress.get("message"))
