"""A project's queues as their commands change them (docs/flow-control.md): created by an
admin or on a project's first job naming them, changed, paused, resumed, deleted.

``scope`` narrows a command to the queues of the projects where the caller may change them
(``jobs_common.tenancy.Scope``); any other queue is answered as not found."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterable
from enum import StrEnum

from sqlalchemy import and_, delete, exists, func, or_, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common import queue_rows
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_common.jobstore import jobs, queues, retry_policies
from jobs_common.queue_commands import QueueCreate, QueuePatch, QueueSettings, QueueView
from jobs_common.tenancy import Scope
from jobs_scheduler.domain.submissions import QueueDefaults

FIRST_USE = "first job"  # created_by of a queue made by its first job


class Removed(StrEnum):
    DELETED = "deleted"
    MISSING = "missing"
    BUSY = "busy"  # unfinished jobs left


NO_DEFAULTS = QueueDefaults()
Pair = tuple[uuid.UUID, str]


class KnownQueues:
    """The (project, queue) pairs of a job store this process made sure exist lately, with
    their defaults: intake pays one ``INSERT ... ON CONFLICT DO NOTHING`` and one read per
    pair and ``ttl`` seconds, not per transaction (that statement cost single requests about
    5 %). A queue deleted meanwhile comes back with the first job recorded after the ``ttl``
    (at once on the replica that deleted it); defaults changed apply within the ``ttl`` (at
    once on the replica that changed them)."""

    def __init__(self, ttl: float = 30.0) -> None:
        self.ttl = ttl
        self._seen: dict[tuple[str, uuid.UUID, str], tuple[float, QueueDefaults]] = {}

    def unknown(self, store: str, pairs: Iterable[Pair]) -> list[Pair]:
        now = time.monotonic()
        return sorted(
            {
                pair
                for pair in pairs
                if now - self._seen.get((store, *pair), (-math.inf, NO_DEFAULTS))[0] > self.ttl
            }
        )

    def seen(self, store: str, defaults: dict[Pair, QueueDefaults]) -> None:
        now = time.monotonic()
        if len(self._seen) > 100_000:  # bounded: forget everything, ensure again
            self._seen.clear()
        for pair, given in defaults.items():
            self._seen[(store, *pair)] = (now, given)

    def defaults(self, store: str, pair: Pair) -> QueueDefaults:
        return self._seen.get((store, *pair), (0.0, NO_DEFAULTS))[1]

    def forget(self, store: str, pair: Pair) -> None:
        self._seen.pop((store, *pair), None)


KNOWN = KnownQueues()


def _store(connection: AsyncConnection) -> str:
    """Which job store (a test process talks to many)."""
    return str(connection.engine.url)


async def ensure(connection: AsyncConnection, pairs: Iterable[Pair]) -> dict[Pair, QueueDefaults]:
    """Create, with no limits, the queues named by jobs being recorded that do not exist yet
    (as far as :data:`KNOWN` says); the defaults of each queue of ``pairs``."""
    store = _store(connection)
    wanted = set(pairs)
    missing = KNOWN.unknown(store, wanted)
    if missing:
        await connection.execute(
            insert(queues)
            .values(
                [
                    {"id": uuid.uuid4(), "project_id": p, "name": n, "created_by": FIRST_USE}
                    for p, n in missing
                ]
            )
            .on_conflict_do_nothing(index_elements=["project_id", "name"])
        )
        rows = await connection.execute(
            select(
                queues.c.project_id,
                queues.c.name,
                queues.c.default_timeout_seconds,
                queues.c.default_retry_policy,
                queues.c.default_priority,
            ).where(tuple_(queues.c.project_id, queues.c.name).in_(missing))
        )
        found = {pair: NO_DEFAULTS for pair in missing}
        for row in rows:
            found[(row.project_id, row.name)] = QueueDefaults(
                row.default_timeout_seconds, row.default_retry_policy, row.default_priority
            )
        # Known once this transaction commits; a rollback leaves the pairs known for the ttl
        # at worst (their jobs are not recorded either: a retry records them, and the queue
        # with the first job after the ttl).
        KNOWN.seen(store, found)
    return {pair: KNOWN.defaults(store, pair) for pair in wanted}


async def _check_policy(
    connection: AsyncConnection, project_id: uuid.UUID, name: str | None
) -> None:
    """A default retry policy must be one of the project's named policies or a shared one."""
    if name is None:
        return
    found = await connection.scalar(
        select(
            exists().where(
                retry_policies.c.name == name,
                or_(
                    retry_policies.c.project_id == project_id, retry_policies.c.project_id.is_(None)
                ),
            )
        )
    )
    if not found:
        raise ValidationFailed(
            "request validation failed",
            details=[
                ErrorDetail(
                    field="defaultRetryPolicy",
                    message=f"no retry policy named {name!r} in this project",
                )
            ],
        )


async def create(
    engine: AsyncEngine, command: QueueCreate, *, project_id: uuid.UUID, by: str
) -> QueueView | None:
    """Insert the queue; None if the project has one of that name."""
    async with engine.begin() as connection:
        await _check_policy(connection, project_id, command.default_retry_policy)
        paused = bool(command.paused)
        queue_id = await connection.scalar(
            insert(queues)
            .values(
                id=uuid.uuid4(),
                project_id=project_id,
                name=command.name,
                **command.columns(QueueSettings.model_fields.keys()),
                paused=paused,
                paused_at=func.now() if paused else None,
                paused_by=by if paused else None,
                created_by=by,
            )
            .on_conflict_do_nothing(index_elements=["project_id", "name"])
            .returning(queues.c.id)
        )
        if queue_id is None:
            return None
        KNOWN.forget(_store(connection), (project_id, command.name))  # its defaults: at once
        return await queue_rows.one(connection, queue_id, Scope())


async def _locked_project(
    connection: AsyncConnection, queue_id: uuid.UUID, scope: Scope
) -> uuid.UUID | None:
    """The queue's project, its row locked; None where ``scope`` does not reach it."""
    found = await connection.scalar(
        select(queues.c.project_id)
        .where(queues.c.id == queue_id, *queue_rows.within(scope))
        .with_for_update()
    )
    return found if isinstance(found, uuid.UUID) else None


async def change(
    engine: AsyncEngine, queue_id: uuid.UUID, scope: Scope, patch: QueuePatch
) -> QueueView | None:
    """Apply the given fields; None where the queue is not the caller's or gone."""
    async with engine.begin() as connection:
        project_id = await _locked_project(connection, queue_id, scope)
        if project_id is None:
            return None
        values = patch.changes()
        if values.get("default_retry_policy") is not None:
            await _check_policy(connection, project_id, str(values["default_retry_policy"]))
        if values:
            await connection.execute(
                update(queues)
                .where(queues.c.id == queue_id)
                .values(**values, updated_at=func.now())
            )
        view = await queue_rows.one(connection, queue_id, Scope())
        if view is not None:
            KNOWN.forget(_store(connection), (project_id, view.name))  # its defaults: at once
        return view


async def set_paused(
    engine: AsyncEngine, queue_id: uuid.UUID, scope: Scope, *, paused: bool, by: str
) -> QueueView | None:
    """Pause or resume (idempotent: a second pause keeps the first one's time and author)."""
    async with engine.begin() as connection:
        if await _locked_project(connection, queue_id, scope) is None:
            return None
        await connection.execute(
            update(queues)
            .where(queues.c.id == queue_id, queues.c.paused.is_not(paused))
            .values(
                paused=paused,
                paused_at=func.now() if paused else None,
                paused_by=by if paused else None,
                updated_at=func.now(),
            )
        )
        return await queue_rows.one(connection, queue_id, Scope())


async def remove(engine: AsyncEngine, queue_id: uuid.UUID, scope: Scope) -> Removed:
    """Delete a queue none of whose jobs is unfinished."""
    async with engine.begin() as connection:
        row = (
            await connection.execute(
                select(queues.c.project_id, queues.c.name)
                .where(queues.c.id == queue_id, *queue_rows.within(scope))
                .with_for_update()
            )
        ).first()
        if row is None:
            return Removed.MISSING
        busy = await connection.scalar(
            select(
                exists().where(
                    and_(
                        jobs.c.project_id == row.project_id,
                        jobs.c.queue == row.name,
                        queue_rows.UNFINISHED,
                    )
                )
            )
        )
        if busy:
            return Removed.BUSY
        await connection.execute(delete(queues).where(queues.c.id == queue_id))
        KNOWN.forget(_store(connection), (row.project_id, row.name))
        return Removed.DELETED
