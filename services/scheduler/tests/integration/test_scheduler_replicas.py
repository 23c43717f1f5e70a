"""Two scheduler replicas on one database and vhost: every job dispatched exactly once."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobDispatch, utcnow
from jobs_common.jobstore import jobs, read_horizons, schedule_fires, schedules
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.horizons import LEASE_QUEUES
from jobs_scheduler.service import Runtime, start_runtime, stop_runtime
from jobs_scheduler.settings import Settings

from .conftest import eventually, job_result, submitted

pytestmark = pytest.mark.integration


async def test_two_replicas_dispatch_each_job_and_each_retry_exactly_once(
    scheduler: Runtime, scheduler_settings: Settings, bus: RabbitBus, db: AsyncEngine
) -> None:
    second: Runtime = await start_runtime(scheduler_settings)
    try:
        messages = [submitted(max_attempts=2) for _ in range(300)]
        await asyncio.gather(*(bus.publisher.publish(topology.SUBMITTED, m) for m in messages))
        wanted = {m.job_id for m in messages}
        seen: Counter[tuple[object, int]] = Counter()
        ready = bus.topology.queues[topology.READY_MEDIUM]

        async def drain(expected: int) -> bool:
            while (message := await ready.get(no_ack=True, fail=False)) is not None:
                dispatch = JobDispatch.model_validate_json(message.body)
                seen[(dispatch.job_id, dispatch.attempt)] += 1
            return sum(1 for key in seen if key[1] == expected) >= len(wanted)

        await eventually(lambda: drain(1), timeout=30, what="300 first dispatches")
        # Fail every first attempt: the promotion loops of both replicas race for the retries.
        await asyncio.gather(
            *(
                bus.publisher.publish(
                    topology.RESULTS,
                    job_result(job_id, 1, "failed", worker_id="w"),
                )
                for job_id in wanted
            )
        )
        await eventually(lambda: drain(2), timeout=30, what="300 second dispatches")
        assert {job_id for job_id, _ in seen} == wanted
        assert set(seen.values()) == {1}, "a job attempt was dispatched twice"
        async with db.connect() as connection:
            count = (await connection.execute(select(func.count()).select_from(jobs))).scalar_one()
        assert count == 300
    finally:
        await stop_runtime(second)


async def test_two_replicas_fire_each_cron_time_once_and_promote_each_delayed_job_once(
    scheduler: Runtime, scheduler_settings: Settings, bus: RabbitBus, db: AsyncEngine
) -> None:
    now = utcnow()
    schedule_ids = [uuid.uuid4() for _ in range(20)]
    async with db.begin() as connection:
        await connection.execute(
            insert(schedules),
            [
                {
                    "id": schedule_id,
                    "name": f"every-minute-{index}",
                    "cron": "* * * * *",
                    "timezone": "Europe/Berlin",
                    "job_template": {"type": "simulate", "priority": 2, "payload": {}},
                    "owner": "user@test.com",
                    # Down for ten minutes: ten fire times were missed.
                    "next_fire_at": now - timedelta(minutes=10),
                }
                for index, schedule_id in enumerate(schedule_ids)
            ],
        )
    delayed = [submitted(run_at=now + timedelta(seconds=1)) for _ in range(200)]
    second: Runtime = await start_runtime(scheduler_settings)
    try:
        await asyncio.gather(*(bus.publisher.publish(topology.SUBMITTED, m) for m in delayed))
        seen: Counter[tuple[object, int]] = Counter()
        ready = bus.topology.queues[topology.READY_MEDIUM]

        async def drain() -> bool:
            while (message := await ready.get(no_ack=True, fail=False)) is not None:
                dispatch = JobDispatch.model_validate_json(message.body)
                seen[(dispatch.job_id, dispatch.attempt)] += 1
            return len(seen) >= len(delayed) + len(schedule_ids)

        await eventually(drain, timeout=30, what="every delayed and cron job dispatched")
        assert set(seen.values()) == {1}, "a job was dispatched twice"
        assert {m.job_id for m in delayed} <= {job_id for job_id, _ in seen}
        async with db.connect() as connection:
            fires = (
                await connection.execute(
                    select(schedule_fires.c.schedule_id, func.count()).group_by(
                        schedule_fires.c.schedule_id
                    )
                )
            ).all()
            cron_jobs = (
                await connection.execute(
                    select(func.count()).select_from(jobs).where(jobs.c.schedule_id.is_not(None))
                )
            ).scalar_one()
            next_fires = (await connection.execute(select(schedules.c.next_fire_at))).scalars()
            assert all(fire > now for fire in next_fires)
        # Once each for the ten missed minutes; once more per minute boundary the test crossed
        # (every-minute schedules fire again then, rightly).
        crossed = int(utcnow().timestamp() // 60 - now.timestamp() // 60)
        counts = dict(fires)
        assert set(counts) == set(schedule_ids)
        assert all(1 <= count <= 1 + crossed for count in counts.values()), (counts, crossed)
        assert cron_jobs == sum(counts.values())
    finally:
        await stop_runtime(second)


async def test_a_replica_forgets_a_predecessor_of_its_host_and_pid_not_its_siblings(
    scheduler: Runtime, scheduler_settings: Settings, db: AsyncEngine
) -> None:
    """A container restarted by its runtime keeps its hostname and runs the scheduler under
    the same pid: its predecessor's frozen horizons would hold every lease judgment back for
    90 s. Another replica of this very process (the ``scheduler`` fixture's) is alive."""
    predecessor = f"{socket.gethostname()}-{os.getpid()}-dead00"

    async def replicas() -> set[str]:
        async with db.connect() as connection:
            return set((await connection.execute(select(read_horizons.c.replica_id))).scalars())

    async def sibling_read() -> bool:
        return scheduler.replica_id in await replicas()

    await eventually(sibling_read, what="the sibling's first horizons")
    async with db.begin() as connection:
        for queue in LEASE_QUEUES:
            await connection.execute(
                insert(read_horizons).values(
                    replica_id=predecessor, queue=queue, horizon=utcnow() - timedelta(seconds=5)
                )
            )
    second: Runtime = await start_runtime(scheduler_settings)
    try:
        found = await replicas()
        assert predecessor not in found
        assert scheduler.replica_id in found  # the sibling's horizons stay
    finally:
        await stop_runtime(second)
