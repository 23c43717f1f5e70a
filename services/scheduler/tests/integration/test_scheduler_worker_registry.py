"""The worker registry keeps what the heartbeats report for the Workers view: quiet and the
processed / failed counts, never moved back by a heartbeat applied late; a quiet worker is no
live consumer for routing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import workers
from jobs_scheduler.adapters.routing import live_workers
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.heartbeats import apply_heartbeats
from jobs_scheduler.service import job_defaults
from jobs_scheduler.settings import Settings

from .conftest import heartbeat

pytestmark = pytest.mark.integration


async def test_quiet_and_counts_follow_the_latest_heartbeat(
    db: AsyncEngine, scheduler_settings: Settings
) -> None:
    first = heartbeat("w-counts").model_copy(update={"processed": 5, "failed": 1})
    later = first.model_copy(
        update={
            "processed": 9,
            "failed": 2,
            "quiet": True,
            "sent_at": first.sent_at + timedelta(seconds=2),
        }
    )
    for beats in ([later], [first]):  # the earlier one applied late (redelivered)
        async with db.begin() as connection:
            await apply_heartbeats(connection, Changes(), beats, job_defaults(scheduler_settings))
    async with db.connect() as connection:
        row = (
            await connection.execute(
                select(workers.c.quiet, workers.c.processed, workers.c.failed).where(
                    workers.c.id == "w-counts"
                )
            )
        ).one()
    assert tuple(row) == (True, 9, 2)


async def test_a_quiet_worker_is_no_live_consumer_for_routing(
    db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """A quiet worker consumes no ready queue: a job routed by it would sit in its queue, so
    routing leaves it out (its type's jobs wait, with the reason, for a worker that takes)."""
    beats = [
        heartbeat("w-taking").model_copy(update={"types": ["email"]}),
        heartbeat("w-quiet").model_copy(update={"types": ["email"], "quiet": True}),
    ]
    async with db.begin() as connection:
        await apply_heartbeats(connection, Changes(), beats, job_defaults(scheduler_settings))
        found = await live_workers(connection, lease_seconds=10, stale_after=90)
    assert {w.worker_id for w in found} & {"w-taking", "w-quiet"} == {"w-taking"}
