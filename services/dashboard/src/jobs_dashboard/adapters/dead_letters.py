"""Dead letters and their audit log as read (joined with their job for visibility); the
scheduler writes them (``scheduler_api.py``)."""

from __future__ import annotations

import uuid

from sqlalchemy import Select, func, or_, select, text
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.disclosure import WORKER_SILENT
from jobs_common.jobstore import dead_letter_actions, dead_letters, jobs
from jobs_dashboard.adapters.store import AnyRow, Store, visible
from jobs_dashboard.domain.dead_letters import (
    DeadLetterAction,
    DeadLetterFilters,
    DeadLetterGroup,
    DeadLetterItem,
    DeadLetterState,
)
from jobs_dashboard.domain.query import PageRequest, Visibility

JOINED = dead_letters.join(jobs, jobs.c.id == dead_letters.c.job_id)
ITEM_COLUMNS = (
    *dead_letters.c,
    jobs.c.type.label("job_type"),
    jobs.c.status.label("job_status"),
    jobs.c.project_id,
)
NEWEST_FIRST = (dead_letters.c.created_at.desc(), dead_letters.c.id.desc())
OLDEST_FIRST = (dead_letters.c.created_at.asc(), dead_letters.c.id.asc())


def owner_conditions(visibility: Visibility) -> list[ColumnElement[bool]]:
    """A dead letter is visible with its job."""
    return visible(visibility, owner=jobs.c.submitted_by, project=jobs.c.project_id)


def fingerprint_column(filters: DeadLetterFilters) -> ColumnElement[str]:
    """The fingerprint as the reader reads it: a plain user's without the worker a lost
    lease's error names (``jobs_common.disclosure.fingerprint_for_owner``, in SQL)."""
    if not filters.for_owner:
        return dead_letters.c.fingerprint
    pattern, replacement = WORKER_SILENT
    return func.regexp_replace(dead_letters.c.fingerprint, pattern, replacement, "g")


def job_conditions(filters: DeadLetterFilters) -> list[ColumnElement[bool]]:
    """The clauses over the letter's job: who may see it, its type and status."""
    conditions = owner_conditions(filters.visibility)
    if filters.job_type is not None:
        conditions.append(jobs.c.type == filters.job_type)
    if filters.job_status is not None:
        conditions.append(jobs.c.status == filters.job_status.value)
    return conditions


def letter_conditions(filters: DeadLetterFilters) -> list[ColumnElement[bool]]:
    """The clauses over ``dead_letters`` alone. An open or resolved state is a partial index
    in the pages' order: ``ix_dead_letters_open`` (created_at), ``ix_dead_letters_resolved``
    (created_at, id)."""
    conditions: list[ColumnElement[bool]] = []
    if filters.state is DeadLetterState.OPEN:
        conditions.append(dead_letters.c.resolved_at.is_(None))
    elif filters.state is DeadLetterState.RESOLVED:
        conditions.append(dead_letters.c.resolved_at.is_not(None))
    if filters.reason is not None:
        conditions.append(dead_letters.c.reason == filters.reason)
    if filters.fingerprint is not None:
        conditions.append(fingerprint_column(filters) == filters.fingerprint)
    if filters.created.created_from is not None:
        conditions.append(dead_letters.c.created_at >= filters.created.created_from)
    if filters.created.created_to is not None:
        conditions.append(dead_letters.c.created_at < filters.created.created_to)
    if filters.ids:
        conditions.append(dead_letters.c.id.in_(filters.ids))
    return conditions


def dead_letter_conditions(filters: DeadLetterFilters) -> list[ColumnElement[bool]]:
    """WHERE clauses over ``dead_letters JOIN jobs`` for ``filters``."""
    return job_conditions(filters) + letter_conditions(filters)


def count_query(filters: DeadLetterFilters) -> Select[int]:
    """How many letters ``filters`` select. With no clause on the job, ``dead_letters``
    alone: every letter has its job (``job_id`` NOT NULL, a foreign key deleting the letter
    with the job), so the join changes no count, and without it the count is an index-only
    scan of the state's partial index instead of a hash join over every letter and job
    (docs/operations.md, "After a prune")."""
    on_jobs = job_conditions(filters)
    source = JOINED if on_jobs else dead_letters
    return select(func.count()).select_from(source).where(*on_jobs, *letter_conditions(filters))


def to_item(row: AnyRow) -> DeadLetterItem:
    return DeadLetterItem(
        id=row.id,
        job_id=row.job_id,
        project_id=row.project_id,
        job_type=row.job_type,
        job_status=row.job_status,
        attempt=row.attempt,
        reason=row.reason,
        last_error=row.last_error,
        last_error_class=row.last_error_class,
        fingerprint=row.fingerprint,
        payload_snapshot=row.payload_snapshot,
        created_at=row.created_at,
        resolved_at=row.resolved_at,
        resolved_by=row.resolved_by,
        resolution=row.resolution,
    )


class DeadLetterStore(Store):
    async def page(
        self, filters: DeadLetterFilters, page: PageRequest
    ) -> tuple[list[DeadLetterItem], int]:
        conditions = dead_letter_conditions(filters)
        async with self.snapshot() as connection:
            if not job_conditions(filters):
                # An index-only count of one table: two parallel workers cost more to start
                # than they save (20-31 ms against 13 for 200,000 letters on 2 cores).
                await connection.execute(text("SET LOCAL max_parallel_workers_per_gather = 0"))
            total = int(await connection.scalar(count_query(filters)) or 0)
            if total <= page.offset:
                return [], total
            rows = await connection.execute(
                select(*ITEM_COLUMNS)
                .select_from(JOINED)
                .where(*conditions)
                .order_by(*NEWEST_FIRST)
                .limit(page.limit)
                .offset(page.offset)
            )
            return [to_item(row) for row in rows], total

    async def groups(self, filters: DeadLetterFilters, *, limit: int) -> list[DeadLetterGroup]:
        """Groups by fingerprint, largest first; the sample is the newest error of the group."""
        count = func.count().label("count")
        fingerprint = fingerprint_column(filters)
        newest_error = func.array_agg(
            aggregate_order_by(dead_letters.c.last_error, dead_letters.c.created_at.desc())
        )[1]
        query = (
            select(
                fingerprint.label("fingerprint"),
                count,
                func.array_agg(dead_letters.c.reason.distinct()).label("reasons"),
                newest_error.label("sample_error"),
                func.min(dead_letters.c.created_at).label("first_at"),
                func.max(dead_letters.c.created_at).label("last_at"),
            )
            .select_from(JOINED)
            .where(*dead_letter_conditions(filters))
            .group_by(fingerprint)
            .order_by(count.desc(), fingerprint)
            .limit(limit)
        )
        async with self.snapshot() as connection:
            rows = await connection.execute(query)
            return [
                DeadLetterGroup(
                    fingerprint=row.fingerprint,
                    count=row.count,
                    reasons=sorted(row.reasons),
                    sample_error=row.sample_error,
                    first_at=row.first_at,
                    last_at=row.last_at,
                )
                for row in rows
            ]

    async def get(self, dead_letter_id: uuid.UUID, visibility: Visibility) -> DeadLetterItem | None:
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(*ITEM_COLUMNS)
                    .select_from(JOINED)
                    .where(dead_letters.c.id == dead_letter_id, *owner_conditions(visibility))
                )
            ).first()
        return None if row is None else to_item(row)

    async def count(self, filters: DeadLetterFilters) -> int:
        async with self.engine.connect() as connection:
            found = await connection.scalar(count_query(filters))
        return int(found or 0)

    async def select_for_bulk(
        self, filters: DeadLetterFilters, *, limit: int
    ) -> tuple[int, list[DeadLetterItem]]:
        """How many letters match, and the first ``limit`` of them (oldest first): a sample."""
        conditions = dead_letter_conditions(filters)
        async with self.snapshot() as connection:
            matching = int(await connection.scalar(count_query(filters)) or 0)
            rows = await connection.execute(
                select(*ITEM_COLUMNS)
                .select_from(JOINED)
                .where(*conditions)
                .order_by(*OLDEST_FIRST)
                .limit(limit)
            )
            return matching, [to_item(row) for row in rows]

    async def matching_ids(self, filters: DeadLetterFilters, *, limit: int) -> list[uuid.UUID]:
        """The first ``limit`` matching letters' ids, oldest first (a bulk command's)."""
        async with self.snapshot() as connection:
            rows = await connection.execute(
                select(dead_letters.c.id)
                .select_from(JOINED)
                .where(*dead_letter_conditions(filters))
                .order_by(*OLDEST_FIRST)
                .limit(limit)
            )
            return list(rows.scalars())

    async def actions(
        self,
        visibility: Visibility,
        actor: str,
        page: PageRequest,
        *,
        dead_letter_id: uuid.UUID | None = None,
        job_id: uuid.UUID | None = None,
    ) -> tuple[list[DeadLetterAction], int]:
        """The audit log newest first: everything for a caller ``visibility`` does not limit
        (the platform admin); else ``actor``'s own rows and, within its projects, the rows
        on their jobs (a bulk row names no job: its actor's alone)."""
        conditions: list[ColumnElement[bool]] = []
        mine = dead_letter_actions.c.actor == actor
        if visibility.projects is not None:
            theirs = select(jobs.c.id).where(jobs.c.project_id.in_(sorted(visibility.projects)))
            conditions.append(or_(mine, dead_letter_actions.c.job_id.in_(theirs)))
        elif visibility.owner is not None:
            conditions.append(mine)
        if dead_letter_id is not None:
            conditions.append(dead_letter_actions.c.dead_letter_id == dead_letter_id)
        if job_id is not None:
            conditions.append(dead_letter_actions.c.job_id == job_id)
        async with self.snapshot() as connection:
            total = int(
                await connection.scalar(
                    select(func.count()).select_from(dead_letter_actions).where(*conditions)
                )
                or 0
            )
            rows = await connection.execute(
                select(dead_letter_actions)
                .where(*conditions)
                .order_by(dead_letter_actions.c.id.desc())
                .limit(page.limit)
                .offset(page.offset)
            )
            return [
                DeadLetterAction(
                    id=row.id,
                    action=row.action,
                    actor=row.actor,
                    reason=row.reason,
                    dead_letter_id=row.dead_letter_id,
                    job_id=row.job_id,
                    selector=row.selector,
                    affected=row.affected,
                    at=row.at,
                )
                for row in rows
            ], total
