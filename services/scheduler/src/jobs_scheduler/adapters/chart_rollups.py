"""The console's chart rollups (migration 0027; docs/dashboard.md, "Charts"), written by the
replica that takes a minute in the queue samples sweep (``adapters/queue_samples.py``), so
once a minute whatever the load and never on a job's path.

Taking minute T it writes, in the one transaction that took T:

- per (project, queue, priority) with unfinished jobs, the jobs waiting and running and how
  long the oldest queued one has waited (one pass over the unfinished jobs, as the queue
  samples do);
- the live workers' count, busy and total slots of T (``queue_sample_minutes``);
- the jobs that finished in minute T-1 by how they ended: one range of ``ix_jobs_finished``
  per terminal status, so its cost is one minute's throughput. A job whose finishing
  transaction started before T and committed after this one is not counted;
- each project's totals of its queues (queue ``*``) and the platform's (project ``PLATFORM``,
  queue ``*``) beside them, so a chart of the platform or of a project reads a row per
  priority and window's minute, however many queues there are;
- once per hour, the hour before T's summed into ``queue_hours`` and ``queue_sample_hours``
  (T-1's finishes are in by then; the totals' rows sum as the others).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.dialects.postgresql import INTERVAL
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import CHART_ALL_QUEUES, CHART_PLATFORM

KEEP_MINUTES = timedelta(days=1)
KEEP_HOURS = timedelta(days=8)
# A worker counts as live for a minute's figures when it sent a heartbeat this recently (they
# come every ~2 s) and is not stopping.
WORKER_LIVE_WITHIN = timedelta(seconds=30)

_MINUTE = "date_trunc('minute', now())"

SAMPLE_QUEUES = text(
    f"""
    INSERT INTO queue_minutes (minute, project_id, queue, priority, waiting, running,
                               oldest_wait_seconds, succeeded, dead, cancelled)
    SELECT {_MINUTE}, project_id, queue, priority,
           count(*) FILTER (WHERE status <> 'running'), count(*) FILTER (WHERE status = 'running'),
           coalesce(extract(epoch FROM now() - min(queued_at) FILTER (WHERE status = 'queued')),
                    0),
           0, 0, 0
    FROM jobs WHERE status NOT IN ('succeeded', 'dead', 'cancelled')
    GROUP BY project_id, queue, priority
    ON CONFLICT DO NOTHING
    """
)
SAMPLE_WORKERS = text(
    f"""
    UPDATE queue_sample_minutes SET (workers, busy_slots, slots) = (
        SELECT count(*), coalesce(sum(active_jobs), 0), coalesce(sum(concurrency), 0)
        FROM workers WHERE last_heartbeat_at >= now() - :live AND NOT stopping)
    WHERE minute = {_MINUTE}
    """
).bindparams(bindparam("live", type_=INTERVAL))


def _finished(status: str) -> str:
    return (
        f"SELECT project_id, queue, priority, status FROM jobs WHERE status = '{status}' "
        f"AND finished_at >= {_MINUTE} - interval '1 minute' AND finished_at < {_MINUTE}"
    )


CLOSE_FINISHES = text(
    f"""
    INSERT INTO queue_minutes AS q (minute, project_id, queue, priority, waiting, running,
                                    oldest_wait_seconds, succeeded, dead, cancelled)
    SELECT {_MINUTE} - interval '1 minute', project_id, queue, priority, 0, 0, 0,
           count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'dead'),
           count(*) FILTER (WHERE status = 'cancelled')
    FROM ({_finished("succeeded")} UNION ALL {_finished("dead")}
          UNION ALL {_finished("cancelled")}) AS finished
    GROUP BY project_id, queue, priority
    ON CONFLICT (minute, project_id, queue, priority) DO UPDATE SET
        succeeded = excluded.succeeded, dead = excluded.dead, cancelled = excluded.cancelled
    """
)

# The totals' rows: each project's (queue ALL_QUEUES), the platform's (project PLATFORM too).
ALL_QUEUES, PLATFORM = CHART_ALL_QUEUES, CHART_PLATFORM
_COLUMNS = (
    "minute, project_id, queue, priority, waiting, running, oldest_wait_seconds, succeeded, "
    "dead, cancelled"
)
_DEPTHS = "sum(waiting), sum(running), max(oldest_wait_seconds), 0, 0, 0"
_FINISHES = "0, 0, 0, sum(succeeded), sum(dead), sum(cancelled)"
_SET_FINISHES = (
    "DO UPDATE SET succeeded = excluded.succeeded, dead = excluded.dead, "
    "cancelled = excluded.cancelled"
)


def _totals(minute: str, measures: str, conflict: str) -> list[TextClause]:
    """The minute's per-project totals (from its queues' rows), then the platform's (from
    the projects' totals)."""
    return [
        text(
            f"INSERT INTO queue_minutes ({_COLUMNS}) "
            f"SELECT {minute}, project_id, '{ALL_QUEUES}', priority, {measures} "
            f"FROM queue_minutes WHERE minute = {minute} AND queue <> '{ALL_QUEUES}' "
            f"GROUP BY project_id, priority "
            f"ON CONFLICT (minute, project_id, queue, priority) {conflict}"
        ),
        text(
            f"INSERT INTO queue_minutes ({_COLUMNS}) "
            f"SELECT {minute}, '{PLATFORM}'::uuid, '{ALL_QUEUES}', priority, {measures} "
            f"FROM queue_minutes WHERE minute = {minute} AND queue = '{ALL_QUEUES}' "
            f"AND project_id <> '{PLATFORM}'::uuid GROUP BY priority "
            f"ON CONFLICT (minute, project_id, queue, priority) {conflict}"
        ),
    ]


SUM_DEPTHS = _totals(_MINUTE, _DEPTHS, "DO NOTHING")
SUM_FINISHES = _totals(f"({_MINUTE} - interval '1 minute')", _FINISHES, _SET_FINISHES)

_LAST_HOUR = "date_trunc('hour', now()) - interval '1 hour'"
_IN_LAST_HOUR = f"minute >= {_LAST_HOUR} AND minute < date_trunc('hour', now())"
TAKE_HOUR = text(
    f"""
    INSERT INTO queue_sample_hours (hour, minutes, worker_minutes, workers, busy_slots, slots)
    SELECT {_LAST_HOUR}, count(*), count(workers), coalesce(sum(workers), 0),
           coalesce(sum(busy_slots), 0), coalesce(sum(slots), 0)
    FROM queue_sample_minutes WHERE {_IN_LAST_HOUR}
    ON CONFLICT DO NOTHING RETURNING hour
    """
)
SUM_HOUR = text(
    f"""
    INSERT INTO queue_hours (hour, project_id, queue, priority, waiting, running,
                             oldest_wait_seconds, succeeded, dead, cancelled)
    SELECT {_LAST_HOUR}, project_id, queue, priority, sum(waiting), sum(running),
           max(oldest_wait_seconds), sum(succeeded), sum(dead), sum(cancelled)
    FROM queue_minutes WHERE {_IN_LAST_HOUR}
    GROUP BY project_id, queue, priority
    ON CONFLICT DO NOTHING
    """
)
PRUNE = [
    text(f"DELETE FROM {table} WHERE {time} < now() - :keep").bindparams(
        bindparam("keep", type_=INTERVAL)
    )
    for table, time in (("queue_minutes", "minute"), ("queue_hours", "hour"))
]
PRUNE_SAMPLE_HOURS = text("DELETE FROM queue_sample_hours WHERE hour < now() - :keep").bindparams(
    bindparam("keep", type_=INTERVAL)
)


async def write_chart_rollups(
    connection: AsyncConnection,
    *,
    keep_minutes: timedelta = KEEP_MINUTES,
    keep_hours: timedelta = KEEP_HOURS,
) -> None:
    """The chart rollups of the minute the caller just took (in its transaction)."""
    await connection.execute(SAMPLE_QUEUES)
    for statement in SUM_DEPTHS:
        await connection.execute(statement)
    await connection.execute(SAMPLE_WORKERS, {"live": WORKER_LIVE_WITHIN})
    await connection.execute(CLOSE_FINISHES)
    for statement in SUM_FINISHES:
        await connection.execute(statement)
    if (await connection.execute(TAKE_HOUR)).first() is not None:
        await connection.execute(SUM_HOUR)
    prune_minutes, prune_hours = PRUNE
    await connection.execute(prune_minutes, {"keep": keep_minutes})
    await connection.execute(prune_hours, {"keep": keep_hours})
    await connection.execute(PRUNE_SAMPLE_HOURS, {"keep": keep_hours})
