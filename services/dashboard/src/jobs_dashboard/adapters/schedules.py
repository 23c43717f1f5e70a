"""Cron schedules as read: pages and a schedule with its last fires. The scheduler writes
them (``adapters/scheduler_api.py``)."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.jobstore import jobs, schedule_fires, schedules
from jobs_common.schedule_commands import ScheduleView
from jobs_dashboard.adapters.store import AnyRow, Store, visible
from jobs_dashboard.domain.query import PageRequest, Visibility
from jobs_dashboard.domain.schedules import LAST_FIRES, ScheduleDetail, ScheduleFire


def owner_conditions(visibility: Visibility) -> list[ColumnElement[bool]]:
    return visible(visibility, owner=schedules.c.owner, project=schedules.c.project_id)


def to_view(row: AnyRow) -> ScheduleView:
    return ScheduleView(
        id=row.id,
        name=row.name,
        cron=row.cron,
        timezone=row.timezone,
        job_template=row.job_template,
        owner=row.owner,
        project_id=row.project_id,
        paused=row.paused,
        next_fire_at=row.next_fire_at,
        last_fire_at=row.last_fire_at,
        last_job_id=row.last_job_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
        declared_in=row.declared_in,
        declared_at=row.declared_at,
    )


class ScheduleStore(Store):
    async def page(
        self, visibility: Visibility, page: PageRequest
    ) -> tuple[list[ScheduleView], int]:
        conditions = owner_conditions(visibility)
        async with self.snapshot() as connection:
            total = int(
                await connection.scalar(
                    select(func.count()).select_from(schedules).where(*conditions)
                )
                or 0
            )
            rows = await connection.execute(
                select(schedules)
                .where(*conditions)
                .order_by(schedules.c.name, schedules.c.owner, schedules.c.id)
                .limit(page.limit)
                .offset(page.offset)
            )
            return [to_view(row) for row in rows], total

    async def get(self, schedule_id: uuid.UUID, visibility: Visibility) -> ScheduleDetail | None:
        """The schedule with its last fires (newest first) and each fired job's status."""
        async with self.snapshot() as connection:
            row = (
                await connection.execute(
                    select(schedules).where(
                        schedules.c.id == schedule_id, *owner_conditions(visibility)
                    )
                )
            ).first()
            if row is None:
                return None
            fires = await connection.execute(
                select(schedule_fires, jobs.c.status.label("job_status"))
                .select_from(schedule_fires.outerjoin(jobs, jobs.c.id == schedule_fires.c.job_id))
                .where(schedule_fires.c.schedule_id == schedule_id)
                .order_by(schedule_fires.c.fire_time.desc())
                .limit(LAST_FIRES)
            )
            return ScheduleDetail(
                **to_view(row).model_dump(),
                fires=[
                    ScheduleFire(
                        fire_time=fire.fire_time,
                        job_id=fire.job_id,
                        fired_at=fire.fired_at,
                        job_status=fire.job_status,
                    )
                    for fire in fires
                ],
            )
