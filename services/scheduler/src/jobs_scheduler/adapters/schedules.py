"""The schedules' rows as their commands change them: create (under the owner's caps),
pause, resume, delete. Firing them is ``app/cron.py``.

``scope`` narrows a command to the schedules of the projects where the caller may change
them (``jobs_common.tenancy.Scope``); any other schedule is answered as not found."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import utcnow
from jobs_common.cron import next_fire_after
from jobs_common.jobstore import schedule_fires, schedules
from jobs_common.schedule_commands import NewSchedule, ScheduleCaps, ScheduleView
from jobs_common.scoped_rows import visible
from jobs_common.tenancy import Scope
from jobs_scheduler.domain.schedules import check_caps

# pg_advisory_xact_lock(namespace, hashtext(owner)): one schedule create per owner at a time.
OWNER_LOCK_NAMESPACE = 0x5C4E


def owned(schedule_id: uuid.UUID, scope: Scope) -> list[ColumnElement[bool]]:
    return [
        schedules.c.id == schedule_id,
        *visible(scope, owner=schedules.c.owner, project=schedules.c.project_id),
    ]


def to_view(row: Row[Any]) -> ScheduleView:
    return ScheduleView.model_validate(row._mapping)


async def create(
    engine: AsyncEngine, command: NewSchedule, *, owner: str, project_id: uuid.UUID
) -> ScheduleView | None:
    """Insert a schedule due at its next fire time after now; None if the project has the name.

    With caps, the owner's schedules are counted first, in the same transaction, under a
    transaction-scoped advisory lock on the owner (two creates of one owner cannot both pass
    the count); raises ``ScheduleQuotaExceeded`` past a cap."""
    values = {
        "id": uuid.uuid4(),
        "name": command.name,
        "cron": command.cron,
        "timezone": command.timezone,
        "job_template": command.job_template,
        "owner": owner,
        "project_id": project_id,
        "paused": False,
        "next_fire_at": next_fire_after(command.cron, command.timezone, utcnow()),
    }
    async with engine.begin() as connection:
        if command.caps is not None:
            await _check_caps(connection, owner, command.caps, command.job_template)
        row = (
            await connection.execute(
                insert(schedules)
                .values(**values)
                .on_conflict_do_nothing(index_elements=[schedules.c.project_id, schedules.c.name])
                .returning(*schedules.c)
            )
        ).first()
    return None if row is None else to_view(row)


async def _check_caps(
    connection: AsyncConnection, owner: str, caps: ScheduleCaps, job_template: dict[str, Any]
) -> None:
    await connection.execute(
        select(func.pg_advisory_xact_lock(OWNER_LOCK_NAMESPACE, func.hashtext(owner)))
    )
    is_email = schedules.c.job_template["type"].astext == "email"
    counted = (
        await connection.execute(
            # ix_schedules_owner_name: the owner's rows only.
            select(func.count(), func.count().filter(is_email)).where(schedules.c.owner == owner)
        )
    ).one()
    check_caps(
        caps,
        schedules=int(counted[0]),
        email_schedules=int(counted[1]),
        is_email=job_template.get("type") == "email",
    )


async def set_paused(
    engine: AsyncEngine, schedule_id: uuid.UUID, scope: Scope, *, paused: bool
) -> ScheduleView | None:
    """Pause (no next fire), or resume from now: fire times missed while paused are skipped.
    Pausing a paused or resuming an active schedule changes nothing. None if not found."""
    async with engine.begin() as connection:
        row = (
            await connection.execute(
                select(schedules).where(*owned(schedule_id, scope)).with_for_update()
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


async def remove(engine: AsyncEngine, schedule_id: uuid.UUID, scope: Scope) -> bool:
    """Delete a schedule (its fire log goes with it); False if not found."""
    async with engine.begin() as connection:
        deleted = await connection.scalar(
            delete(schedules).where(*owned(schedule_id, scope)).returning(schedules.c.id)
        )
    return deleted is not None


async def lock_due(connection: AsyncConnection, limit: int, now: datetime) -> list[Row[Any]]:
    """Up to ``limit`` active schedules due at ``now``, earliest first, locked (``SKIP
    LOCKED``: another replica fires those it holds)."""
    rows = await connection.execute(
        select(schedules)
        .where(schedules.c.paused.is_(False), schedules.c.next_fire_at <= now)
        .order_by(schedules.c.next_fire_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(rows.all())


async def pause_unusable(connection: AsyncConnection, schedule_id: uuid.UUID) -> None:
    await connection.execute(
        update(schedules)
        .where(schedules.c.id == schedule_id)
        .values(paused=True, updated_at=func.now())
    )


async def record_fire(
    connection: AsyncConnection, schedule_id: uuid.UUID, fire_time: datetime, job_id: uuid.UUID
) -> bool:
    """Record one fire of a schedule; False when that fire time was recorded before (unique
    ``(schedule_id, fire_time)``: each fire creates one job, whatever the replicas)."""
    recorded = await connection.execute(
        insert(schedule_fires)
        .values(schedule_id=schedule_id, fire_time=fire_time, job_id=job_id)
        .on_conflict_do_nothing()
        .returning(schedule_fires.c.job_id)
    )
    return recorded.first() is not None


async def advance(
    connection: AsyncConnection,
    schedule_id: uuid.UUID,
    *,
    fired_at: datetime,
    next_fire_at: datetime,
    job_id: uuid.UUID,
) -> None:
    await connection.execute(
        update(schedules)
        .where(schedules.c.id == schedule_id)
        .values(
            next_fire_at=next_fire_at,
            last_fire_at=fired_at,
            last_job_id=job_id,
            updated_at=func.now(),
        )
    )
