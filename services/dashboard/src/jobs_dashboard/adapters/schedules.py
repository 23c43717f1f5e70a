"""Cron schedules: the rows the dashboard writes (create, pause, resume, delete) and reads."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import utcnow
from jobs_common.cron import next_fire_after
from jobs_common.jobstore import jobs, schedule_fires, schedules
from jobs_dashboard.adapters.store import AnyRow, Store
from jobs_dashboard.domain.query import PageRequest, Visibility
from jobs_dashboard.domain.schedules import (
    LAST_FIRES,
    ScheduleCaps,
    ScheduleDetail,
    ScheduleFire,
    ScheduleView,
)

# pg_advisory_xact_lock(namespace, hashtext(owner)): one schedule create per owner at a time.
OWNER_LOCK_NAMESPACE = 0x5C4E


def owner_conditions(visibility: Visibility) -> list[ColumnElement[bool]]:
    return [] if visibility.owner is None else [schedules.c.owner == visibility.owner]


def to_view(row: AnyRow) -> ScheduleView:
    return ScheduleView(
        id=row.id,
        name=row.name,
        cron=row.cron,
        timezone=row.timezone,
        job_template=row.job_template,
        owner=row.owner,
        paused=row.paused,
        next_fire_at=row.next_fire_at,
        last_fire_at=row.last_fire_at,
        last_job_id=row.last_job_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class ScheduleStore(Store):
    async def create(
        self,
        *,
        name: str,
        cron: str,
        timezone: str,
        job_template: dict[str, Any],
        owner: str,
        caps: ScheduleCaps | None = None,
    ) -> ScheduleView | None:
        """Insert a schedule due at its next fire time after now; None if the owner has the name.

        With ``caps``, the owner's schedules are counted first, in the same transaction, under
        a transaction-scoped advisory lock on the owner (two creates of one owner cannot both
        pass the count); raises :class:`ScheduleQuotaExceeded` past a cap."""
        values = {
            "id": uuid.uuid4(),
            "name": name,
            "cron": cron,
            "timezone": timezone,
            "job_template": job_template,
            "owner": owner,
            "paused": False,
            "next_fire_at": next_fire_after(cron, timezone, utcnow()),
        }
        async with self.transaction() as connection:
            if caps is not None:
                await self._check_caps(connection, owner, caps, job_template)
            row = (
                await connection.execute(
                    insert(schedules)
                    .values(**values)
                    .on_conflict_do_nothing(index_elements=[schedules.c.owner, schedules.c.name])
                    .returning(*schedules.c)
                )
            ).first()
        return None if row is None else to_view(row)

    async def _check_caps(
        self,
        connection: AsyncConnection,
        owner: str,
        caps: ScheduleCaps,
        job_template: dict[str, Any],
    ) -> None:
        await connection.execute(
            select(func.pg_advisory_xact_lock(OWNER_LOCK_NAMESPACE, func.hashtext(owner)))
        )
        is_email = schedules.c.job_template["type"].astext == "email"
        counted = (
            await connection.execute(
                # ix_schedules_owner_name: the owner's rows only.
                select(func.count(), func.count().filter(is_email)).where(
                    schedules.c.owner == owner
                )
            )
        ).one()
        caps.check(
            schedules=int(counted[0]),
            email_schedules=int(counted[1]),
            is_email=job_template.get("type") == "email",
        )

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

    async def set_paused(
        self, schedule_id: uuid.UUID, visibility: Visibility, *, paused: bool
    ) -> ScheduleView | None:
        """Pause (no next fire), or resume from now: fire times missed while paused are skipped.

        Pausing a paused or resuming an active schedule changes nothing. None if not visible.
        """
        async with self.transaction() as connection:
            row = (
                await connection.execute(
                    select(schedules)
                    .where(schedules.c.id == schedule_id, *owner_conditions(visibility))
                    .with_for_update()
                )
            ).first()
            if row is None:
                return None
            if row.paused == paused:
                return to_view(row)
            next_fire = None if paused else next_fire_after(row.cron, row.timezone, utcnow())
            updated = (
                await connection.execute(
                    update(schedules)
                    .where(schedules.c.id == schedule_id)
                    .values(paused=paused, next_fire_at=next_fire, updated_at=func.now())
                    .returning(*schedules.c)
                )
            ).one()
        return to_view(updated)

    async def delete(self, schedule_id: uuid.UUID, visibility: Visibility) -> bool:
        async with self.transaction() as connection:
            deleted = await connection.scalar(
                delete(schedules)
                .where(schedules.c.id == schedule_id, *owner_conditions(visibility))
                .returning(schedules.c.id)
            )
        return deleted is not None
