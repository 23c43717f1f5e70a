"""Leases judged against how far the scheduler has read, not the wall clock (issue 6)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobRunning, utcnow
from jobs_common.jobstore import job_attempts, read_horizons
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.api.sweeps import sweeps_for
from jobs_scheduler.service import Runtime, job_defaults
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import (
    SHORT_LEASE,
    consumer_of,
    control_queue,
    heartbeat,
    job_result,
    job_row,
    next_cancel,
    next_dispatch,
    submitted,
    timeline_reasons,
    wait_status,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60), pytest.mark.short_lease]


@contextlib.asynccontextmanager
async def not_reading(scheduler: Runtime, *queues: str) -> AsyncIterator[None]:
    """The scheduler stops consuming ``queues`` (as when it is paused or far behind), while
    its loops, the reaper among them, keep running."""
    paused = [consumer_of(scheduler, queue) for queue in queues]
    for consumer in paused:
        await consumer.stop()
    try:
        yield
    finally:
        for consumer in paused:
            await consumer.start()


async def start_attempt(bus: RabbitBus, db: AsyncEngine, worker_id: str) -> uuid.UUID:
    message = submitted(max_attempts=5)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=message.job_id, attempt=1, worker_id=worker_id, started_at=utcnow()),
    )
    await wait_status(db, message.job_id, "running")
    return message.job_id


async def beat_for(bus: RabbitBus, worker_id: str, job_id: uuid.UUID, seconds: float) -> None:
    """A live worker: a heartbeat listing the attempt every 0.2 s."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        await bus.publisher.publish(topology.HEARTBEAT, heartbeat(worker_id, (job_id, 1)))
        await asyncio.sleep(0.2)


async def attempt_statuses(db: AsyncEngine, job_id: uuid.UUID) -> list[str]:
    async with db.connect() as connection:
        rows = await connection.execute(
            select(job_attempts.c.status)
            .where(job_attempts.c.job_id == job_id)
            .order_by(job_attempts.c.attempt)
        )
        return list(rows.scalars())


async def test_a_scheduler_that_stops_reading_for_three_leases_re_runs_nothing(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    job_id = await start_attempt(bus, db, "w-live")
    async with not_reading(scheduler, topology.HEARTBEAT, topology.RESULTS):
        # The worker keeps reporting and then finishes; nothing of it is read meanwhile.
        await beat_for(bus, "w-live", job_id, seconds=3 * SHORT_LEASE)
        await bus.publisher.publish(topology.RESULTS, job_result(job_id, 1, worker_id="w-live"))
        await asyncio.sleep(SHORT_LEASE)
        assert (await job_row(db, job_id)).status == "running"
    row = await wait_status(db, job_id, "succeeded")
    assert (row.attempt, row.lost_count) == (1, 0)
    assert await attempt_statuses(db, job_id) == ["succeeded"]
    assert not any("lease" in reason for reason in await timeline_reasons(db, job_id))
    no_second = await bus.topology.queues[topology.READY_MEDIUM].get(no_ack=True, fail=False)
    assert no_second is None


async def test_a_dead_workers_attempt_is_retried_within_the_lease_and_counts_toward_poison(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    job_id = await start_attempt(bus, db, "w-doomed")
    await beat_for(bus, "w-doomed", job_id, seconds=0.5)
    died_at = asyncio.get_running_loop().time()
    retry = await next_dispatch(bus, timeout=SHORT_LEASE + 5)  # lease + reaper + retry backoff
    assert (retry.job_id, retry.attempt) == (job_id, 2)
    assert asyncio.get_running_loop().time() - died_at < SHORT_LEASE + 5
    row = await job_row(db, job_id)
    assert row.lost_count == 1
    assert (await attempt_statuses(db, job_id))[0] == "lost"


async def test_a_live_worker_that_no_longer_lists_an_attempt_loses_it_without_a_poison_count(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    control = await control_queue(bus)
    job_id = await start_attempt(bus, db, "w-forgetful")

    async def alive_without_it() -> None:
        while True:
            await bus.publisher.publish(topology.HEARTBEAT, heartbeat("w-forgetful"))
            await asyncio.sleep(0.2)

    beating = asyncio.create_task(alive_without_it())
    try:
        retry = await next_dispatch(bus, timeout=SHORT_LEASE + 5)
        assert (retry.job_id, retry.attempt) == (job_id, 2)
        cancel = await next_cancel(control)
        assert (cancel.job_id, cancel.attempt, cancel.worker_id) == (job_id, 1, "w-forgetful")
    finally:
        beating.cancel()
    assert (await job_row(db, job_id)).lost_count == 0


async def test_each_replica_records_how_far_it_has_read_and_forgets_it_on_stop(
    db: AsyncEngine, scheduler: Runtime
) -> None:
    async def horizons() -> set[str] | None:
        async with db.connect() as connection:
            rows = await connection.execute(
                select(read_horizons.c.queue).where(
                    read_horizons.c.replica_id == scheduler.replica_id
                )
            )
            queues = set(rows.scalars())
        return queues if len(queues) == 3 else None

    queues = await eventually(horizons, what="read horizons of three queues")
    assert queues == {topology.RUNNING, topology.HEARTBEAT, topology.RESULTS}
    lag = scheduler.consumers.progress.lag_seconds(topology.HEARTBEAT)
    assert 0 <= lag < 5


async def test_the_horizons_of_a_replica_gone_long_ago_are_pruned(
    db: AsyncEngine, scheduler_settings: Settings
) -> None:
    stale = scheduler_settings.horizon_stale_seconds
    async with db.begin() as connection:
        await connection.execute(
            insert(read_horizons),
            [
                {
                    "replica_id": replica,
                    "queue": topology.RESULTS,
                    "horizon": utcnow(),
                    "updated_at": utcnow() - timedelta(seconds=age),
                }
                for replica, age in (("crashed-long-ago", 11 * stale), ("just-stale", 2 * stale))
            ],
        )
    reconciler = sweeps_for(scheduler_settings, job_defaults(scheduler_settings))["reconciler"][0]
    async with db.begin() as connection:
        await reconciler(connection, Changes())
    async with db.connect() as connection:
        left = set((await connection.execute(select(read_horizons.c.replica_id))).scalars())
    assert left == {"just-stale"}  # stale, but not long enough to be forgotten
