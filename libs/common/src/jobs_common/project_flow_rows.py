"""A project's weight and quotas as their view (``project_flow.ProjectFlowView``), read alike
by the dashboard (``GET /api/project-flow/{projectId}``) and the scheduler (its internal
API)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import project_flow
from jobs_common.project_flow import ProjectFlowView

COLUMNS = (
    project_flow.c.project_id,
    project_flow.c.weight,
    project_flow.c.max_waiting,
    project_flow.c.max_submitted_per_day,
    project_flow.c.max_running,
    project_flow.c.updated_by,
    project_flow.c.updated_at,
)


def view(row: Any) -> ProjectFlowView:
    return ProjectFlowView(
        project_id=row.project_id,
        weight=row.weight,
        max_waiting=row.max_waiting,
        max_submitted_per_day=row.max_submitted_per_day,
        max_running=row.max_running,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
    )


async def one(connection: AsyncConnection, project_id: uuid.UUID) -> ProjectFlowView:
    """The project's settings; a project without a row weighs 1 and has no quota."""
    row = (
        await connection.execute(select(*COLUMNS).where(project_flow.c.project_id == project_id))
    ).first()
    return ProjectFlowView.unset(project_id) if row is None else view(row)
