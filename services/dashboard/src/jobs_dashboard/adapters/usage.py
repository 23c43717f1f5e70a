"""A project's usage per UTC day as the scheduler's usage sweep folded it (``project_usage``;
docs/flow-control.md, "Usage"): one row per project and day that saw any, within a scope."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import select

from jobs_common.jobstore import project_usage
from jobs_dashboard.adapters.store import Store


class UsageStore(Store):
    async def days(
        self, projects: frozenset[uuid.UUID] | None, first: date, last: date
    ) -> Sequence[Any]:
        """The rows of ``projects`` (None: every project) from ``first`` to ``last``, by day
        and project."""
        statement = (
            select(project_usage)
            .where(project_usage.c.day >= first, project_usage.c.day <= last)
            .order_by(project_usage.c.day, project_usage.c.project_id)
        )
        if projects is not None:
            statement = statement.where(project_usage.c.project_id.in_(sorted(projects)))
        async with self.snapshot() as connection:
            return (await connection.execute(statement)).all()
