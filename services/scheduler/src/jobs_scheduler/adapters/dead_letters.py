"""Dead-letter rows as their commands change them: lock the letters a command names (with
their jobs), resolve discarded ones, and write the audit log ``dead_letter_actions``.
Requeued letters are resolved in the transaction of their job's move
(``app/commands.requeue_dead_jobs``).

``scope`` narrows a command to the letters of jobs in the projects where the caller may act
on them (``jobs_common.tenancy.Scope``); any other letter is not found."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.dead_letter_commands import (
    RESOLUTION_DISCARDED,
    RESOLUTION_REQUEUED,
    Resolved,
)
from jobs_common.jobstore import dead_letter_actions, dead_letters, jobs
from jobs_common.scoped_rows import visible
from jobs_common.tenancy import Scope
from jobs_scheduler.adapters.set_based import any_of

_UUID = UUID(as_uuid=True)
LETTER_COLUMNS = (
    dead_letters.c.id,
    dead_letters.c.job_id,
    dead_letters.c.resolved_at,
    dead_letters.c.resolution,
    jobs.c.status.label("job_status"),
    jobs.c.attempt.label("job_attempt"),
)


@dataclass(frozen=True)
class ActionRecord:
    """One row of the dead-letter audit log."""

    action: str
    actor: str
    reason: str | None
    dead_letter_id: uuid.UUID | None = None
    job_id: uuid.UUID | None = None
    selector: dict[str, Any] | None = None
    affected: int = 1

    def values(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "actor": self.actor,
            "reason": self.reason,
            "dead_letter_id": self.dead_letter_id,
            "job_id": self.job_id,
            "selector": self.selector,
            "affected": self.affected,
        }


async def lock_letters(
    connection: AsyncConnection,
    ids: Sequence[uuid.UUID],
    scope: Scope,
    *,
    skip_locked: bool = False,
) -> list[Row[Any]]:
    """The letters of ``ids`` within ``scope``, oldest first, each locked with its job
    (a bulk command skips rows another command holds)."""
    conditions = [
        dead_letters.c.id == any_of("ids", _UUID, ids),
        *visible(scope, owner=jobs.c.submitted_by, project=jobs.c.project_id),
    ]
    query = (
        select(*LETTER_COLUMNS)
        .select_from(dead_letters.join(jobs, jobs.c.id == dead_letters.c.job_id))
        .where(*conditions)
        .order_by(dead_letters.c.created_at, dead_letters.c.id)
        .with_for_update(of=(dead_letters, jobs), skip_locked=skip_locked)
    )
    return list(await connection.execute(query))


async def discard(
    connection: AsyncConnection, ids: Sequence[uuid.UUID], actor: str
) -> list[Resolved]:
    """Resolve the open letters of ``ids`` as discarded; the ones resolved meanwhile stay."""
    if not ids:
        return []
    rows = await connection.execute(
        update(dead_letters)
        .where(
            dead_letters.c.id == any_of("ids", _UUID, ids),
            dead_letters.c.resolved_at.is_(None),
        )
        .values(resolved_at=func.now(), resolved_by=actor, resolution=RESOLUTION_DISCARDED)
        .returning(
            dead_letters.c.id.label("dead_letter_id"),
            dead_letters.c.job_id,
            dead_letters.c.resolved_at,
            dead_letters.c.resolved_by,
            dead_letters.c.resolution,
        )
    )
    return [Resolved.model_validate(row._mapping) for row in rows]


async def resolve_requeued(
    connection: AsyncConnection, job_ids: Sequence[uuid.UUID], actor: str
) -> None:
    """Resolve the open letters of ``job_ids``, whose jobs were requeued, as requeued."""
    await connection.execute(
        update(dead_letters)
        .where(
            dead_letters.c.job_id == any_of("job_ids", _UUID, job_ids),
            dead_letters.c.resolved_at.is_(None),
        )
        .values(resolved_at=func.now(), resolved_by=actor, resolution=RESOLUTION_REQUEUED)
    )


async def resolution_of(connection: AsyncConnection, dead_letter_id: uuid.UUID) -> Resolved:
    row = (
        await connection.execute(
            select(
                dead_letters.c.id.label("dead_letter_id"),
                dead_letters.c.job_id,
                dead_letters.c.resolved_at,
                dead_letters.c.resolved_by,
                dead_letters.c.resolution,
            ).where(dead_letters.c.id == dead_letter_id)
        )
    ).one()
    return Resolved.model_validate(row._mapping)


async def record_actions(connection: AsyncConnection, records: Sequence[ActionRecord]) -> None:
    if records:
        await connection.execute(insert(dead_letter_actions), [r.values() for r in records])
