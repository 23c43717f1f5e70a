"""Retry policies, batches and queued counts: small reads (the workers: ``workers.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import batches, jobs, retry_policies
from jobs_common.retry_policy_commands import RetryPolicyView
from jobs_dashboard.adapters.store import AnyRow, Store, visible
from jobs_dashboard.domain.batches import BatchPage, BatchView, batch_view
from jobs_dashboard.domain.id_prefix import IdPrefix
from jobs_dashboard.domain.query import PageRequest, Visibility


def batch_conditions(visibility: Visibility) -> list[ColumnElement[bool]]:
    return visible(visibility, owner=batches.c.submitted_by, project=batches.c.project_id)


def to_policy(row: AnyRow) -> RetryPolicyView:
    return RetryPolicyView(
        name=row.name,
        project_id=row.project_id,
        strategy=row.strategy,
        base_delay_ms=row.base_delay_ms,
        multiplier=row.multiplier,
        max_delay_ms=row.max_delay_ms,
        jitter=row.jitter,
        max_attempts=row.max_attempts,
        created_by=row.created_by,
        created_at=row.created_at,
    )


class RegistryStore(Store):
    async def policies(self, visibility: Visibility) -> list[RetryPolicyView]:
        """The shared policies and those of the projects ``visibility`` reads, by name (a
        shared one before a project's of the same name)."""
        conditions = []
        if visibility.projects is not None:
            conditions.append(
                or_(
                    retry_policies.c.project_id.is_(None),
                    retry_policies.c.project_id.in_(sorted(visibility.projects)),
                )
            )
        order = (retry_policies.c.name, retry_policies.c.project_id.asc().nulls_first())
        async with self.snapshot() as connection:
            rows = await connection.execute(
                select(retry_policies).where(*conditions).order_by(*order)
            )
            return [to_policy(row) for row in rows]

    async def batch(self, batch_id: uuid.UUID, visibility: Visibility) -> BatchView | None:
        conditions = [batches.c.id == batch_id, *batch_conditions(visibility)]
        async with self.snapshot() as connection:
            row = (await connection.execute(select(batches).where(*conditions))).first()
            if row is None:
                return None
            found = await connection.execute(
                select(jobs.c.status, func.count().label("n"))
                .where(jobs.c.batch_id == batch_id)
                .group_by(jobs.c.status)
            )
            by_status = {status: int(n) for status, n in found}
        return batch_view(
            batch_id=row.id,
            submitted_by=row.submitted_by,
            project_id=row.project_id,
            total=row.total,
            created_at=row.created_at,
            found=by_status,
        )

    async def batch_page(
        self,
        visibility: Visibility,
        page: PageRequest,
        ids: IdPrefix | None = None,
    ) -> BatchPage:
        """Newest first (``ix_batches_created`` / ``ix_batches_owner_created``), each with its
        members counted by status in one grouped query over ``ix_jobs_batch``. ``ids``: only
        the ids starting with that prefix, a range read on the primary key."""
        conditions = batch_conditions(visibility)
        if ids is not None:
            conditions += [batches.c.id >= ids.lowest, batches.c.id <= ids.highest]
        async with self.snapshot() as connection:
            total = (
                await connection.execute(
                    select(func.count()).select_from(batches).where(*conditions)
                )
            ).scalar_one()
            rows = (
                await connection.execute(
                    select(batches)
                    .where(*conditions)
                    .order_by(batches.c.created_at.desc(), batches.c.id.desc())
                    .limit(page.page_size)
                    .offset(page.offset)
                )
            ).all()
            found: dict[uuid.UUID, dict[str, int]] = {row.id: {} for row in rows}
            if rows:
                counted = await connection.execute(
                    select(jobs.c.batch_id, jobs.c.status, func.count().label("n"))
                    .where(jobs.c.batch_id.in_(list(found)))
                    .group_by(jobs.c.batch_id, jobs.c.status)
                )
                for batch_id, status, n in counted:
                    found[batch_id][status] = int(n)
        items = [
            batch_view(
                batch_id=row.id,
                submitted_by=row.submitted_by,
                project_id=row.project_id,
                total=row.total,
                created_at=row.created_at,
                found=found[row.id],
            )
            for row in rows
        ]
        return BatchPage.of(items, int(total), page)

    async def dead_members(
        self, batch_id: uuid.UUID, limit: int
    ) -> list[tuple[uuid.UUID, str | None]]:
        """The batch's dead members (id, trace id), at most ``limit``, over ``ix_jobs_batch``."""
        async with self.snapshot() as connection:
            rows = await connection.execute(
                select(jobs.c.id, jobs.c.trace_id)
                .where(jobs.c.batch_id == batch_id, jobs.c.status == JobStatus.DEAD.value)
                .order_by(jobs.c.id)
                .limit(limit)
            )
            return [(row.id, row.trace_id) for row in rows]

    async def queued_by_queue(
        self,
    ) -> tuple[datetime, dict[tuple[str, int], tuple[int, datetime | None]]]:
        """The database's now, and per named queue and priority: how many jobs are queued,
        since when. Read through ``ix_jobs_queued_since`` (only queued jobs), so it costs the
        backlog."""
        async with self.snapshot() as connection:
            now: datetime = (await connection.execute(select(func.now()))).scalar_one()
            rows = await connection.execute(
                select(jobs.c.queue, jobs.c.priority, func.count(), func.min(jobs.c.queued_at))
                .where(jobs.c.status == "queued")
                .group_by(jobs.c.queue, jobs.c.priority)
            )
            return now, {(str(row[0]), int(row[1])): (int(row[2]), row[3]) for row in rows}

    async def queued_by_priority(self) -> tuple[datetime, dict[int, tuple[int, datetime | None]]]:
        """:meth:`queued_by_queue` summed over the named queues."""
        now, by_queue = await self.queued_by_queue()
        totals: dict[int, tuple[int, datetime | None]] = {}
        for (_, priority), (count, oldest) in by_queue.items():
            total, first = totals.get(priority, (0, None))
            earliest = min((t for t in (first, oldest) if t is not None), default=None)
            totals[priority] = (total + count, earliest)
        return now, totals
