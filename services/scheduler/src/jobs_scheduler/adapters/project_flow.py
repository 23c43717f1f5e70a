"""A project's weight in fair dispatch as its admins set it (docs/flow-control.md, "Project
weights"): read (a project without a row weighs 1) and set, one row per project given one.

Which projects a caller may read or set is the route's check (``api/project_flow.py``)."""

from __future__ import annotations

import uuid

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import project_flow_rows
from jobs_common.jobstore import project_flow
from jobs_common.project_flow import ProjectFlowChange, ProjectFlowView


async def read(engine: AsyncEngine, project_id: uuid.UUID) -> ProjectFlowView:
    async with engine.connect() as connection:
        return await project_flow_rows.one(connection, project_id)


async def set_weight(
    engine: AsyncEngine, project_id: uuid.UUID, change: ProjectFlowChange, *, by: str
) -> ProjectFlowView:
    """Insert the project's row, or change its weight: the last writer wins."""
    values = insert(project_flow).values(project_id=project_id, weight=change.weight, updated_by=by)
    upsert = values.on_conflict_do_update(
        index_elements=[project_flow.c.project_id],
        set_={
            "weight": values.excluded.weight,
            "updated_by": values.excluded.updated_by,
            "updated_at": func.now(),
        },
    ).returning(*project_flow_rows.COLUMNS)
    async with engine.begin() as connection:
        row = (await connection.execute(upsert)).one()
    return project_flow_rows.view(row)
