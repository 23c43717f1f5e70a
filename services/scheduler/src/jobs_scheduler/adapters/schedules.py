"""The schedules' rows as their commands change them: create (under the owner's caps),
create or update by name (the API's, and those declared in code), edit by id, pause, resume,
delete.
Firing them is ``app/cron.py``.

``scope`` narrows a command to the schedules of the projects where the caller may change
them (``jobs_common.tenancy.Scope``); any other schedule is answered as not found."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, delete, func, literal_column, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from jobs_common.contracts import utcnow
from jobs_common.cron import next_fire_after
from jobs_common.jobstore import schedule_fires, schedules
from jobs_common.schedule_commands import NewSchedule, ScheduleCaps, ScheduleEdit, ScheduleView
from jobs_common.scoped_rows import visible
from jobs_common.tenancy import Scope
from jobs_scheduler.domain.schedules import DeclaredInCode, check_caps

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
    connection: AsyncConnection,
    owner: str,
    caps: ScheduleCaps,
    job_template: dict[str, Any],
    *,
    replacing: ColumnElement[bool] | None = None,
) -> None:
    """``replacing``: the row an upsert would update, not counted (it is not one more)."""
    await connection.execute(
        select(func.pg_advisory_xact_lock(OWNER_LOCK_NAMESPACE, func.hashtext(owner)))
    )
    is_email = schedules.c.job_template["type"].astext == "email"
    mine = [schedules.c.owner == owner]
    if replacing is not None:
        mine.append(~replacing)
    counted = (
        await connection.execute(
            # ix_schedules_owner: the owner's rows only.
            select(func.count(), func.count().filter(is_email)).where(*mine)
        )
    ).one()
    check_caps(
        caps,
        schedules=int(counted[0]),
        email_schedules=int(counted[1]),
        is_email=job_template.get("type") == "email",
    )


def upsert_statement(values: dict[str, Any], *, declared: bool) -> Any:
    """One ``INSERT ... ON CONFLICT (project_id, name) DO UPDATE``: two writers racing on a
    name leave one row. An update takes cron, time zone, template and declaration; it moves
    the next fire time only when cron or time zone changed and the schedule is not paused (a
    pause survives). It writes nothing when nothing changed, nor (``declared`` false: the
    API's) over a schedule declared in code; then it returns no row. Returned rows carry
    ``inserted``."""
    statement = insert(schedules).values(**values)
    new, old = statement.excluded, schedules.c
    timing_changed = or_(old.cron != new.cron, old.timezone != new.timezone)
    changed = or_(
        timing_changed,
        old.job_template != new.job_template,
        old.declared_in.is_distinct_from(new.declared_in),
    )
    return statement.on_conflict_do_update(
        index_elements=[old.project_id, old.name],
        set_={
            "cron": new.cron,
            "timezone": new.timezone,
            "job_template": new.job_template,
            "next_fire_at": case(
                (old.paused, old.next_fire_at),
                (timing_changed, new.next_fire_at),
                else_=old.next_fire_at,
            ),
            "declared_in": new.declared_in,
            "declared_at": new.declared_at,
            "updated_at": func.now(),
        },
        where=changed if declared else and_(changed, old.declared_in.is_(None)),
    ).returning(*schedules.c, literal_column("(xmax = 0)").label("inserted"))


def _named(project_id: uuid.UUID, name: str) -> ColumnElement[bool]:
    return and_(schedules.c.project_id == project_id, schedules.c.name == name)


async def upsert(
    engine: AsyncEngine, command: NewSchedule, *, owner: str, project_id: uuid.UUID
) -> tuple[ScheduleView, bool]:
    """Create the project's schedule of ``command.name`` (True) or update it in place (False:
    cron, time zone and template; owner, pause and fire history stay). Raises
    ``DeclaredInCode`` for a schedule code declares, ``ScheduleQuotaExceeded`` past a cap
    (counted without the row it would update)."""
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
        "declared_in": None,
        "declared_at": None,
    }
    named = _named(project_id, command.name)
    async with engine.begin() as connection:
        if command.caps is not None:
            await _check_caps(
                connection, owner, command.caps, command.job_template, replacing=named
            )
        row = (await connection.execute(upsert_statement(values, declared=False))).first()
        if row is not None:
            return to_view(row), bool(row.inserted)
        # Nothing written: unchanged, or declared in code (the conflict kept the row locked).
        kept = (await connection.execute(select(schedules).where(named))).one()
    if kept.declared_in is not None:
        raise DeclaredInCode(command.name, kept.declared_in)
    return to_view(kept), False


async def upsert_declared(
    connection: AsyncConnection,
    *,
    project_id: uuid.UUID,
    name: str,
    cron: str,
    timezone: str,
    job_template: dict[str, Any],
    declared_in: str,
    owner: str,
    now: datetime,
) -> str:
    """A schedule declared in code, created or updated by name (it takes over one of that
    name made through the API). Returns "created", "updated" or "unchanged" (nothing
    written: the usual answer to a worker re-announcing what it declared)."""
    values = {
        "id": uuid.uuid4(),
        "name": name,
        "cron": cron,
        "timezone": timezone,
        "job_template": job_template,
        "owner": owner,
        "project_id": project_id,
        "paused": False,
        "next_fire_at": next_fire_after(cron, timezone, now),
        "declared_in": declared_in,
        "declared_at": now,
    }
    row = (await connection.execute(upsert_statement(values, declared=True))).first()
    if row is None:
        return "unchanged"
    return "created" if row.inserted else "updated"


async def edit(
    engine: AsyncEngine, schedule_id: uuid.UUID, scope: Scope, command: ScheduleEdit
) -> ScheduleView | None:
    """Replace a schedule's cron, time zone and template (name, owner, pause and fires stay);
    the next fire time moves only when cron or time zone changed and it is not paused. None
    if not found; raises ``DeclaredInCode`` for one code declares (the next announcement of
    a worker would undo the edit), ``ScheduleQuotaExceeded`` when the new template makes it
    one email schedule too many.

    The owner's lock (the caps) is taken before the row's, as a create and an upsert do."""
    async with engine.begin() as connection:
        owner = await connection.scalar(select(schedules.c.owner).where(*owned(schedule_id, scope)))
        if owner is None:
            return None
        if command.caps is not None:
            await _check_caps(
                connection,
                owner,
                command.caps,
                command.job_template,
                replacing=schedules.c.id == schedule_id,
            )
        row = await lock_one(connection, schedule_id, scope)
        if row is None:
            return None
        if row.declared_in is not None:
            raise DeclaredInCode(row.name, row.declared_in)
        timing_changed = (row.cron, row.timezone) != (command.cron, command.timezone)
        next_fire = row.next_fire_at
        if timing_changed and not row.paused:
            next_fire = next_fire_after(command.cron, command.timezone, utcnow())
        updated = (
            await connection.execute(
                update(schedules)
                .where(schedules.c.id == schedule_id)
                .values(
                    cron=command.cron,
                    timezone=command.timezone,
                    job_template=command.job_template,
                    next_fire_at=next_fire,
                    updated_at=func.now(),
                )
                .returning(*schedules.c)
            )
        ).one()
    return to_view(updated)


async def lock_one(
    connection: AsyncConnection, schedule_id: uuid.UUID, scope: Scope
) -> Row[Any] | None:
    """The schedule, locked until the transaction ends (a run now waits for a cron tick
    firing it, and two runs now of one schedule go one after the other); None if not found."""
    return (
        await connection.execute(
            select(schedules).where(*owned(schedule_id, scope)).with_for_update()
        )
    ).first()


async def fire_of_job(
    connection: AsyncConnection, schedule_id: uuid.UUID, job_id: uuid.UUID
) -> datetime | None:
    """The fire time at which the schedule made ``job_id``, if it did (its primary key's
    prefix: the schedule's own fires, which retention keeps few)."""
    found: datetime | None = await connection.scalar(
        select(schedule_fires.c.fire_time).where(
            schedule_fires.c.schedule_id == schedule_id, schedule_fires.c.job_id == job_id
        )
    )
    return found


async def note_run(
    connection: AsyncConnection, schedule_id: uuid.UUID, *, fired_at: datetime, job_id: uuid.UUID
) -> None:
    """A run now is the schedule's latest fire; its next fire time stays."""
    await connection.execute(
        update(schedules)
        .where(schedules.c.id == schedule_id)
        .values(last_fire_at=fired_at, last_job_id=job_id, updated_at=func.now())
    )


async def set_paused(
    engine: AsyncEngine, schedule_id: uuid.UUID, scope: Scope, *, paused: bool
) -> ScheduleView | None:
    """Pause (no next fire), or resume from now: fire times missed while paused are skipped.
    Pausing a paused or resuming an active schedule changes nothing. None if not found."""
    async with engine.begin() as connection:
        row = await lock_one(connection, schedule_id, scope)
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
