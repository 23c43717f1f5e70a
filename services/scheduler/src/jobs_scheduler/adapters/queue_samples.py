"""Each queue's jobs waiting and running once a minute (docs/flow-control.md, "Depth and the
last hour"), for the console's sparkline of a queue's last hour.

The queue samples sweep of every replica runs every ``SCHEDULER_QUEUE_SAMPLE_INTERVAL_SECONDS``
(10 s) and samples the minute it runs in (the database's clock) unless a replica did already:
the first to insert the minute into ``queue_sample_minutes`` takes it (a concurrent one waits
for that row's transaction, then finds it taken), counts every queue's unfinished jobs in one
pass over ``ix_jobs_queue_unfinished`` and writes a row per (project, queue) with some. A queue
with nothing unfinished writes none: a reader takes a sampled minute without its row as zeros,
and a minute nobody sampled as unknown. The replica that takes a minute also deletes what is
older than a day, and writes the console's chart rollups of the minute
(``adapters/chart_rollups.py``)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import INTERVAL
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_scheduler.adapters.chart_rollups import write_chart_rollups

KEEP = timedelta(days=1)

TAKE_MINUTE = text(
    "INSERT INTO queue_sample_minutes (minute) VALUES (date_trunc('minute', now())) "
    "ON CONFLICT DO NOTHING RETURNING minute"
)
SAMPLE = text(
    """
    INSERT INTO queue_samples (project_id, queue, minute, waiting, running)
    SELECT project_id, queue, date_trunc('minute', now()),
           count(*) FILTER (WHERE status <> 'running'), count(*) FILTER (WHERE status = 'running')
    FROM jobs WHERE status NOT IN ('succeeded', 'dead', 'cancelled')
    GROUP BY project_id, queue
    ON CONFLICT DO NOTHING
    """
)
PRUNE_SAMPLES = text("DELETE FROM queue_samples WHERE minute < now() - :keep").bindparams(
    bindparam("keep", type_=INTERVAL)
)
PRUNE_MINUTES = text("DELETE FROM queue_sample_minutes WHERE minute < now() - :keep").bindparams(
    bindparam("keep", type_=INTERVAL)
)


async def sample_queues(connection: AsyncConnection, keep: timedelta = KEEP) -> int:
    """Sample this minute's queues unless it is sampled already: 1 when this call took it,
    else 0. Deletes the samples older than ``keep`` with it."""
    if (await connection.execute(TAKE_MINUTE)).first() is None:
        return 0
    await connection.execute(SAMPLE)
    await write_chart_rollups(connection)
    await connection.execute(PRUNE_SAMPLES, {"keep": keep})
    await connection.execute(PRUNE_MINUTES, {"keep": keep})
    return 1
