"""Recording submitted jobs, the SQL: the named retry policies they ask for, the idempotent
multi-row insert of the jobs (with their first status), their batches and dependencies. What
each new job becomes is decided by ``app/recording.py`` (rules: ``domain/submissions.py``).

The INSERT here is the one write of ``jobs.status`` outside the status writer
(``status.py``): a new row is not a change of status. Its moves from "does not exist" are
checked and recorded there (:func:`record_creation`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Integer,
    SmallInteger,
    Text,
    case,
    cast,
    func,
    null,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID, insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import batches, job_dependencies, jobs, retry_policies
from jobs_scheduler.adapters.jobs import DISPATCH_COLUMNS
from jobs_scheduler.adapters.set_based import ArrayRows
from jobs_scheduler.domain.submissions import NamedPolicies

_ID = UUID(as_uuid=True)
NEW_JOBS = ArrayRows(
    "new_jobs",
    id=_ID,
    type=Text(),
    priority=SmallInteger(),
    payload=Text(),
    submitted_by=Text(),
    project_id=_ID,
    status=Text(),
    attempt=Integer(),
    max_attempts=Integer(),
    attempt_limit=Integer(),
    timeout_seconds=Integer(),
    retry_policy=Text(),
    run_at=DateTime(timezone=True),
    batch_id=_ID,
    schedule_id=_ID,
    trace_id=Text(),
    created_at=DateTime(timezone=True),
    queue=Text(),
    ref=Text(),
    has_parents=Boolean(),
)
_JSON = ("payload", "retry_policy")
# Idempotent on the job id: a redelivered submission inserts nothing. A job dispatched at once
# has its reconciler clock started in its row (``queued_at``, as ``side_rows.START_CLOCKS``
# does for later dispatches) instead of by an UPDATE of each new row in the same transaction,
# which, queued_at being indexed (ix_jobs_queued_since), wrote every index entry again.
INSERT_JOBS = (
    insert(jobs)
    .from_select(
        [*NEW_JOBS.columns, "queued_at"],
        select(
            *(
                cast(NEW_JOBS.c[c], JSONB) if c in _JSON else NEW_JOBS.c[c]
                for c in NEW_JOBS.columns
            ),
            case((NEW_JOBS.c.status == "queued", func.now()), else_=null()),
        ),
    )
    .on_conflict_do_nothing(index_elements=[jobs.c.id])
    .returning(*DISPATCH_COLUMNS, jobs.c.status)
)


async def named_policies(
    connection: AsyncConnection, wanted: set[tuple[uuid.UUID, str]]
) -> NamedPolicies:
    """The stored retry policies that ``wanted`` (project, name) pairs may mean: each
    project's own and the shared ones (``project_id`` None), by (project, name)."""
    if not wanted:
        return {}
    projects = {project for project, _ in wanted}
    rows = await connection.execute(
        select(retry_policies).where(
            retry_policies.c.name.in_({name for _, name in wanted}),
            or_(retry_policies.c.project_id.is_(None), retry_policies.c.project_id.in_(projects)),
        )
    )
    return {(row.project_id, row.name): row._asdict() for row in rows}


async def insert_batches(connection: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
    """The batches' rows (``id``, ``submitted_by``, ``project_id``, ``total``); one recorded
    before is kept."""
    if rows:
        await connection.execute(insert(batches).on_conflict_do_nothing(), list(rows))


async def insert_jobs(
    connection: AsyncConnection, rows: Iterable[Sequence[Any]]
) -> dict[uuid.UUID, Row[Any]]:
    """Insert new jobs (tuples in the column order of ``NEW_JOBS``; JSON as text), one
    statement; a job recorded before is not inserted again. The rows inserted, by id, with
    what a dispatch needs and their status."""
    inserted = await connection.execute(INSERT_JOBS, NEW_JOBS.params(rows))
    return {row.id: row for row in inserted}


async def insert_dependencies(
    connection: AsyncConnection, edges: Sequence[dict[str, uuid.UUID]]
) -> None:
    """``{"job_id", "depends_on"}`` rows; one recorded before is kept."""
    if edges:
        await connection.execute(insert(job_dependencies).on_conflict_do_nothing(), list(edges))
