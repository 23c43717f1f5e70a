"""A project's weight in fair dispatch and its quotas as its admins set them
(docs/flow-control.md, "Project weights" and "Quotas"): read (a project without a row weighs
1 and has no quota), changed field by field, one row per project given a setting; and the
quotas with the jobs waiting now, as the submission service checks them.

Which projects a caller may read or set is the route's check (``api/project_flow.py``)."""

from __future__ import annotations

import uuid

from sqlalchemy import Select, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common import project_flow_rows
from jobs_common.jobstore import jobs, project_flow
from jobs_common.project_flow import ProjectFlowChange, ProjectFlowView, ProjectQuota
from jobs_common.queue_rows import UNFINISHED


async def read(engine: AsyncEngine, project_id: uuid.UUID) -> ProjectFlowView:
    async with engine.connect() as connection:
        return await project_flow_rows.one(connection, project_id)


async def write(
    engine: AsyncEngine, project_id: uuid.UUID, change: ProjectFlowChange, *, by: str
) -> ProjectFlowView:
    """Insert the project's row (a weight not given is 1, a quota not given none), or set the
    fields given on it: the last writer of each field wins."""
    given = change.changes()
    values = insert(project_flow).values(project_id=project_id, updated_by=by, **given)
    upsert = values.on_conflict_do_update(
        index_elements=[project_flow.c.project_id],
        set_={
            **{name: values.excluded[name] for name in given},
            "updated_by": values.excluded.updated_by,
            "updated_at": func.now(),
        },
    ).returning(*project_flow_rows.COLUMNS)
    async with engine.begin() as connection:
        row = (await connection.execute(upsert)).one()
    return project_flow_rows.view(row)


def waiting_count(project_id: uuid.UUID) -> Select[int]:
    """The project's unfinished jobs not running now (as a queue's ``waiting``,
    ``jobs_common.queue_rows``), counted on the unfinished jobs' partial index
    (``ix_jobs_queue_unfinished``, led by the project)."""
    return (
        select(func.count())
        .select_from(jobs)
        .where(UNFINISHED, jobs.c.project_id == project_id, jobs.c.status != "running")
    )


async def waiting(connection: AsyncConnection, project_id: uuid.UUID) -> int:
    return int(await connection.scalar(waiting_count(project_id)) or 0)


async def quota(engine: AsyncEngine, project_id: uuid.UUID) -> ProjectQuota:
    """The project's quotas; its waiting jobs are counted only when it has ``max_waiting``."""
    async with engine.connect() as connection:
        settings = await project_flow_rows.one(connection, project_id)
        counted = None if settings.max_waiting is None else await waiting(connection, project_id)
    return ProjectQuota(
        project_id=project_id,
        max_waiting=settings.max_waiting,
        max_submitted_per_day=settings.max_submitted_per_day,
        waiting=counted,
    )
