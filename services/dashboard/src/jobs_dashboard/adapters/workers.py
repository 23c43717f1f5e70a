"""The worker registry as the console reads it: ``workers`` and ``read_heartbeat_horizon``
(both the scheduler's) and, in the same snapshot, the attempts ``jobs`` records as running on
each listed worker. Reads only; an admin's quiet and stop go to the worker itself
(``worker_control.py``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import jobs, read_horizons, workers
from jobs_common.topology import HEARTBEAT
from jobs_dashboard.adapters.store import AnyRow, Store
from jobs_dashboard.domain.workers import (
    STATUS_ORDER,
    RunningJob,
    WorkerList,
    WorkerStatus,
    WorkerView,
    heartbeat_horizon,
    horizon_is_live,
    listing_reference,
    shown_since,
    sorted_workers,
    worker_status,
)

# Running attempts are bounded by the workers' concurrency; this caps a pathological store.
MAX_RUNNING_LISTED = 2_000


async def read_heartbeat_horizon(
    connection: AsyncConnection, *, now: datetime, stale_after: timedelta
) -> datetime | None:
    """The heartbeat queue's horizon over the scheduler replicas still reading it (one row
    per replica, so a handful); None when none is."""
    rows = await connection.execute(
        select(read_horizons.c.horizon, read_horizons.c.updated_at).where(
            read_horizons.c.queue == HEARTBEAT
        )
    )
    return heartbeat_horizon(
        row.horizon
        for row in rows
        if horizon_is_live(updated_at=row.updated_at, now=now, stale_after=stale_after)
    )


def running_job(row: AnyRow) -> RunningJob:
    progress: Any = row.progress
    percent = None
    if isinstance(progress, dict) and progress.get("attempt") == row.attempt:
        percent = progress.get("percent")
    return RunningJob(
        job_id=row.id,
        job_type=row.type,
        attempt=row.attempt,
        started_at=row.started_at,
        progress=percent,
    )


async def running_on(
    connection: AsyncConnection, worker_ids: Sequence[str]
) -> dict[str, list[RunningJob]]:
    """The attempts running on each of ``worker_ids``, oldest first. Read through
    ``ix_jobs_running_lease`` (running jobs only): it costs the jobs running, not the history."""
    if not worker_ids:
        return {}
    rows = await connection.execute(
        select(jobs.c.id, jobs.c.type, jobs.c.attempt, jobs.c.started_at, jobs.c.worker_id)
        .add_columns(jobs.c.progress)
        .where(jobs.c.status == "running", jobs.c.worker_id.in_(list(worker_ids)))
        .order_by(jobs.c.started_at.asc().nulls_last(), jobs.c.id)
        .limit(MAX_RUNNING_LISTED)
    )
    found: dict[str, list[RunningJob]] = defaultdict(list)
    for row in rows:
        found[row.worker_id].append(running_job(row))
    return found


def worker_view(
    row: AnyRow, *, horizon: datetime | None, dead_after: timedelta, running: list[RunningJob]
) -> WorkerView:
    return WorkerView(
        id=row.id,
        hostname=row.hostname,
        pid=row.pid,
        version=row.version,
        queues=list(row.queues),
        concurrency=row.concurrency,
        active_jobs=row.active_jobs,
        started_at=row.started_at,
        last_heartbeat_at=row.last_heartbeat_at,
        status=worker_status(
            last_heartbeat_at=row.last_heartbeat_at,
            stopping=row.stopping,
            quiet=row.quiet,
            horizon=horizon,
            dead_after=dead_after,
        ),
        quiet=row.quiet,
        processed=row.processed,
        failed=row.failed,
        running=running,
    )


class WorkerStore(Store):
    async def workers(
        self, *, dead_after: timedelta, include_dead_minutes: int, horizon_stale_after: timedelta
    ) -> WorkerList:
        """Workers judged against the heartbeat queue's read horizon (domain/workers.py), with
        what each runs, in one snapshot; the database clock decides which readers live."""
        async with self.snapshot() as connection:
            now: datetime = (await connection.execute(select(func.now()))).scalar_one()
            horizon = await read_heartbeat_horizon(
                connection, now=now, stale_after=horizon_stale_after
            )
            newest = None
            if horizon is None:
                newest = (
                    await connection.execute(select(func.max(workers.c.last_heartbeat_at)))
                ).scalar_one()
            reference = listing_reference(horizon=horizon, newest_heartbeat=newest, now=now)
            rows = (
                await connection.execute(
                    select(workers).where(
                        workers.c.last_heartbeat_at
                        >= shown_since(reference, dead_after, include_dead_minutes)
                    )
                )
            ).all()
            running = await running_on(connection, [row.id for row in rows])
        views = sorted_workers(
            worker_view(
                row, horizon=horizon, dead_after=dead_after, running=running.get(row.id, [])
            )
            for row in rows
        )
        counts = dict.fromkeys(STATUS_ORDER, 0)
        for view in views:
            counts[view.status] += 1
        return WorkerList(items=views, counts=counts, heartbeat_horizon=horizon)

    async def status_of(
        self, worker_id: str, *, dead_after: timedelta, horizon_stale_after: timedelta
    ) -> WorkerStatus | None:
        """One worker's status as the listing judges it; None when the registry has no row."""
        async with self.snapshot() as connection:
            now: datetime = (await connection.execute(select(func.now()))).scalar_one()
            horizon = await read_heartbeat_horizon(
                connection, now=now, stale_after=horizon_stale_after
            )
            row = (
                await connection.execute(select(workers).where(workers.c.id == worker_id))
            ).first()
        if row is None:
            return None
        return worker_view(row, horizon=horizon, dead_after=dead_after, running=[]).status
