"""The live workers as routing sees them (``domain/routing.py``): read from the registry
(``workers``, written from heartbeats) and judged against the lease horizon, at most once per
``refresh`` seconds per replica, so the relay's hot path pays a dictionary lookup, not a
query."""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import workers
from jobs_scheduler.adapters import horizons
from jobs_scheduler.adapters.set_based import interval_seconds
from jobs_scheduler.domain.leases import worker_went_silent
from jobs_scheduler.domain.routing import LiveWorker


async def live_workers(
    connection: AsyncConnection, *, lease_seconds: float, stale_after: float
) -> list[LiveWorker]:
    """Workers not stopping nor quiet (an admin's quiet: it consumes no ready queue) whose
    latest heartbeat is within a lease of how far the
    scheduler has read the heartbeats (the lease horizon, as for leases), never of its own
    clock: a scheduler back from a crash or a pause has not yet read the heartbeats sent
    meanwhile, and would take every worker for dead and hold every dispatch back. With no
    horizon yet (every replica just started), within a lease of the latest heartbeat read."""
    horizon = await horizons.current(connection, stale_after=stale_after)
    rows = (
        await connection.execute(
            select(
                workers.c.id, workers.c.queues, workers.c.types, workers.c.last_heartbeat_at
            ).where(
                # Older than a stale horizon: dead by any reading (and the table stays small).
                workers.c.last_heartbeat_at
                > func.now() - interval_seconds(stale_after + lease_seconds),
                workers.c.stopping.is_(False),
                workers.c.quiet.is_(False),
            )
        )
    ).all()
    if not rows:
        return []
    reference = horizon or max(row.last_heartbeat_at for row in rows)
    lease = timedelta(seconds=lease_seconds)
    return [
        LiveWorker(
            row.id,
            frozenset(row.queues or ()),
            frozenset(row.types) if row.types else None,
        )
        for row in rows
        if not worker_went_silent(
            last_heartbeat_at=row.last_heartbeat_at, horizon=reference, lease=lease
        )
    ]


class RoutingView:
    """This replica's cached view of the live workers."""

    def __init__(self, *, lease_seconds: float, stale_after: float, refresh: float = 1.0) -> None:
        self.lease_seconds = lease_seconds
        self.stale_after = stale_after
        self.refresh = refresh
        self._workers: list[LiveWorker] = []
        self._read_at: float | None = None

    async def workers(self, connection: AsyncConnection) -> list[LiveWorker]:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.refresh:
            self._workers = await live_workers(
                connection, lease_seconds=self.lease_seconds, stale_after=self.stale_after
            )
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
