"""Read horizons in PostgreSQL: how far each scheduler replica has read each queue.

See :mod:`jobs_scheduler.domain.leases` for why. A replica records its horizon in the same
transaction as the batch that contained the tick, so the horizon never runs ahead of what is
applied. A replica that stopped updating its rows for ``stale_after`` seconds (it died, or
froze long enough for the broker to take its deliveries back) no longer holds reaping back.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import read_horizons
from jobs_common.topology import HEARTBEAT, RESULTS, RUNNING
from jobs_scheduler.adapters.set_based import interval_seconds
from jobs_scheduler.domain.leases import lease_horizon

# Every queue that carries ticks (the lag of each is exported), and those whose reading
# decides leases and deadlines: heartbeats renew leases, results end attempts.
TICKED_QUEUES = (RUNNING, HEARTBEAT, RESULTS)
LEASE_QUEUES = (HEARTBEAT, RESULTS)


async def record(
    connection: AsyncConnection, *, replica_id: str, queue: str, horizon: datetime
) -> None:
    """Move this replica's horizon on ``queue`` forward to ``horizon`` (never back)."""
    statement = insert(read_horizons).values(
        replica_id=replica_id, queue=queue, horizon=horizon, updated_at=func.now()
    )
    await connection.execute(
        statement.on_conflict_do_update(
            index_elements=[read_horizons.c.replica_id, read_horizons.c.queue],
            set_={
                "horizon": func.greatest(read_horizons.c.horizon, statement.excluded.horizon),
                "updated_at": func.now(),
            },
        )
    )


async def current(connection: AsyncConnection, *, stale_after: float) -> datetime | None:
    """The lease horizon over the live replicas, or None when some lease queue has none."""
    rows = await connection.execute(
        select(read_horizons.c.queue, read_horizons.c.horizon).where(
            read_horizons.c.queue.in_(LEASE_QUEUES),
            read_horizons.c.updated_at > func.now() - interval_seconds(stale_after),
        )
    )
    by_queue: dict[str, list[datetime]] = defaultdict(list)
    for row in rows:
        by_queue[row.queue].append(row.horizon)
    return lease_horizon(by_queue, LEASE_QUEUES)


async def forget(connection: AsyncConnection, *, replica_id: str) -> None:
    """A replica that stops cleanly holds nothing back any more."""
    await connection.execute(delete(read_horizons).where(read_horizons.c.replica_id == replica_id))


async def prune(connection: AsyncConnection, *, older_than: float) -> int:
    """Forget the rows of replicas gone for ``older_than`` seconds (crashed, never stopped
    cleanly): long stale, they hold nothing back; this keeps the table to the live ones."""
    result = await connection.execute(
        delete(read_horizons).where(
            read_horizons.c.updated_at < func.now() - interval_seconds(older_than)
        )
    )
    return int(result.rowcount or 0)


async def replicas(connection: AsyncConnection) -> list[str]:
    """The replicas that have read horizons."""
    rows = await connection.execute(select(read_horizons.c.replica_id).distinct())
    return list(rows.scalars())


async def forget_all(connection: AsyncConnection, replica_ids: list[str]) -> None:
    if replica_ids:
        await connection.execute(
            delete(read_horizons).where(read_horizons.c.replica_id.in_(replica_ids))
        )
