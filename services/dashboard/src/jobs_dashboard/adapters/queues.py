"""A project's queues as read: pages and one queue, each with its jobs waiting and running
now (``jobs_common.queue_rows``). The scheduler writes them (``adapters/scheduler_api.py``)."""

from __future__ import annotations

import uuid

from jobs_common import queue_rows
from jobs_common.jobstore import queues
from jobs_common.queue_commands import QueueView
from jobs_common.tenancy import Scope
from jobs_dashboard.adapters.store import Store
from jobs_dashboard.domain.query import PageRequest


class QueueStore(Store):
    async def page(
        self, scope: Scope, page: PageRequest, *, name: str | None = None
    ) -> tuple[list[QueueView], int]:
        """The queues ``scope`` reaches (of one ``name``), by project and name."""
        conditions = queue_rows.within(scope)
        if name is not None:
            conditions.append(queues.c.name == name)
        async with self.snapshot() as connection:
            total = await queue_rows.total(connection, conditions)
            items = await queue_rows.read(
                connection, conditions, limit=page.limit, offset=page.offset
            )
            return items, total

    async def get(self, queue_id: uuid.UUID, scope: Scope) -> QueueView | None:
        async with self.snapshot() as connection:
            return await queue_rows.one(connection, queue_id, scope)
