"""The named queues the platform knows: every project's queue (``queues``, the scheduler's),
so a queue nothing waits in, or no worker serves, is still listed with its depth."""

from __future__ import annotations

from sqlalchemy import select

from jobs_common.jobstore import queues
from jobs_dashboard.adapters.store import Store


async def known_queue_names(store: Store) -> set[str]:
    """The distinct queue names of every project (a handful of rows)."""
    async with store.snapshot() as connection:
        return set((await connection.execute(select(queues.c.name).distinct())).scalars())
