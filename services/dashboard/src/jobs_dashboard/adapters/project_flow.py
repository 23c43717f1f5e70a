"""A project's weight in fair dispatch and its quotas as read
(``jobs_common.project_flow_rows``; a project without a row weighs 1 and has no quota). The
scheduler writes them (``adapters/scheduler_api.py``)."""

from __future__ import annotations

import uuid

from jobs_common import project_flow_rows
from jobs_common.project_flow import ProjectFlowView
from jobs_dashboard.adapters.store import Store


class ProjectFlowStore(Store):
    async def get(self, project_id: uuid.UUID) -> ProjectFlowView:
        async with self.snapshot() as connection:
            return await project_flow_rows.one(connection, project_id)
