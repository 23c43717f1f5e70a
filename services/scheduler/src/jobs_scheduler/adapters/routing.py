"""The live workers as routing sees them (``domain/routing.py``): read from the registry
(``workers``, written from heartbeats) at most once per ``refresh`` seconds per replica, so
the relay's hot path pays a dictionary lookup, not a query."""

from __future__ import annotations

import time

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import workers
from jobs_scheduler.adapters.set_based import interval_seconds
from jobs_scheduler.domain.routing import LiveWorker


async def live_workers(connection: AsyncConnection, *, lease_seconds: float) -> list[LiveWorker]:
    """Workers whose latest heartbeat is within a lease and that are not stopping."""
    rows = await connection.execute(
        select(workers.c.id, workers.c.queues, workers.c.types).where(
            workers.c.last_heartbeat_at > func.now() - interval_seconds(lease_seconds),
            workers.c.stopping.is_(False),
        )
    )
    return [
        LiveWorker(
            row.id,
            frozenset(row.queues or ()),
            frozenset(row.types) if row.types else None,
        )
        for row in rows
    ]


class RoutingView:
    """This replica's cached view of the live workers."""

    def __init__(self, *, lease_seconds: float, refresh: float = 1.0) -> None:
        self.lease_seconds = lease_seconds
        self.refresh = refresh
        self._workers: list[LiveWorker] = []
        self._read_at: float | None = None

    async def workers(self, connection: AsyncConnection) -> list[LiveWorker]:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.refresh:
            self._workers = await live_workers(connection, lease_seconds=self.lease_seconds)
            self._read_at = now
        return self._workers

    def servable(self) -> set[str] | None:
        """The types some live worker serves as last read (None: some worker serves all)."""
        types: set[str] = set()
        for worker in self._workers:
            if worker.types is None:
                return None
            types |= worker.types
        return types
