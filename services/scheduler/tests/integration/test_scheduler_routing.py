"""A job is dispatched only where a live worker serves its type (issue 31, point 4): to its
queue, to its type's lane while only some workers of the queue serve it, or nowhere (it
waits, queued with the reason) until a worker serving it is live. A worker's hand-back sends
the attempt to the lane, never fails it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import delete, insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import (
    ErrorKind,
    JobDispatch,
    JobError,
    JobSubmitted,
    WorkerHeartbeat,
    utcnow,
)
from jobs_common.jobstore import read_horizons
from jobs_common.jobstore import workers as worker_registry
from jobs_common.rabbit import RabbitBus
from jobs_common.topology import declare_lane, lane_for
from jobs_scheduler.adapters.horizons import LEASE_QUEUES
from jobs_scheduler.adapters.routing import live_workers
from jobs_scheduler.service import Runtime
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import job_result, job_row, submitted, timeline_reasons, wait_status

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TYPE = "acc.reverse"


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings) -> Settings:
    return scheduler_settings.model_copy(
        update={"route_by_live_workers": True, "waiting_interval_seconds": 0.2}
    )


def beat(worker_id: str, *types: str) -> WorkerHeartbeat:
    now = utcnow()
    return WorkerHeartbeat(
        worker_id=worker_id,
        hostname="host",
        pid=1,
        version="1",
        queues=[topology.READY_MEDIUM],
        concurrency=10,
        active=[],
        started_at=now,
        sent_at=now,
        types=list(types),
    )


async def beating(bus: RabbitBus, *beats: WorkerHeartbeat) -> None:
    while True:
        for b in beats:
            fresh = b.model_copy(update={"sent_at": utcnow(), "message_id": uuid.uuid4()})
            await bus.publisher.publish(topology.HEARTBEAT, fresh)
        await asyncio.sleep(0.3)


@pytest.fixture
async def workers(bus: RabbitBus) -> AsyncIterator[list[asyncio.Task[None]]]:
    tasks: list[asyncio.Task[None]] = []
    yield tasks
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def take(bus: RabbitBus, queue: str, timeout: float = 10.0) -> tuple[JobDispatch, bool]:
    """The next ready message on ``queue`` (declared if it is a lane) and whether it was
    marked resent."""
    job_type = topology.lane_type(queue)
    ready = (
        await declare_lane(bus.channel, job_type)
        if job_type is not None
        else bus.topology.queues[queue]
    )

    async def one() -> tuple[JobDispatch, bool] | None:
        message = await ready.get(no_ack=True, fail=False)
        if message is None:
            return None
        dispatch = JobDispatch.model_validate_json(message.body)
        return dispatch, dispatch.resent

    return await eventually(one, timeout=timeout, what=f"a dispatch on {queue}")


async def served_by_one(
    bus: RabbitBus, workers: list[asyncio.Task[None]]
) -> tuple[JobSubmitted, JobDispatch]:
    """One live worker serves ``TYPE`` (on the medium queue): a job of it, and its dispatch."""
    workers.append(asyncio.create_task(beating(bus, beat("w-new", TYPE))))
    await asyncio.sleep(1.5)  # the relay's view has it
    message = submitted(job_type=TYPE)
    await bus.publisher.publish(topology.SUBMITTED, message)
    dispatch, _ = await take(bus, topology.READY_MEDIUM)
    return message, dispatch


async def hand_back(bus: RabbitBus, job_id: uuid.UUID, worker_id: str) -> None:
    """As a worker that does not serve the type it received does."""
    unserved = JobError(kind=ErrorKind.RETRYABLE, error_class="UnservedJobType", message="no")
    await bus.publisher.publish(
        topology.RESULTS, job_result(job_id, 1, "unserved", worker_id=worker_id, error=unserved)
    )


async def nothing_on(bus: RabbitBus, queue: str) -> None:
    await asyncio.sleep(1.0)
    assert await bus.topology.queues[queue].get(no_ack=True, fail=False) is None


async def test_a_job_no_live_worker_serves_waits_then_runs_when_one_arrives(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, workers: list[asyncio.Task[None]]
) -> None:
    workers.append(asyncio.create_task(beating(bus, beat("w-old", "simulate"))))
    await asyncio.sleep(1.5)  # the relay's view has the old worker
    message = submitted(job_type=TYPE)
    await bus.publisher.publish(topology.SUBMITTED, message)

    async def waiting() -> bool:
        row = await job_row(db, message.job_id)
        return row is not None and row.waiting_reason is not None

    await eventually(waiting, what="the job waiting for a worker of its type")
    row = await job_row(db, message.job_id)
    assert (row.status, row.attempt) == ("queued", 1)
    assert TYPE in row.waiting_reason
    assert any(
        r.startswith("waiting: no live worker serves")
        for r in await timeline_reasons(db, message.job_id)
    )
    await nothing_on(bus, topology.READY_MEDIUM)
    # The deploy reaches a worker: the job goes to the type's lane (the old worker, still
    # live, consumes the queue too). Never published before: a first delivery, which runs
    # at once (a copy would be claimed first, and wait a lease).
    workers.append(asyncio.create_task(beating(bus, beat("w-new", TYPE, "simulate"))))
    dispatch, resent = await take(bus, lane_for(TYPE), timeout=20)
    assert (dispatch.job_id, dispatch.attempt, resent) == (message.job_id, 1, False)
    row = await job_row(db, message.job_id)
    assert (row.status, row.waiting_reason) == ("queued", None)
    assert f"a worker serving {TYPE!r} is live" in await timeline_reasons(db, message.job_id)


async def test_while_only_some_workers_of_the_queue_serve_the_type_it_goes_to_its_lane(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, workers: list[asyncio.Task[None]]
) -> None:
    workers.append(
        asyncio.create_task(
            beating(bus, beat("w-new", TYPE, "simulate"), beat("w-old", "simulate"))
        )
    )
    await asyncio.sleep(1.5)
    message = submitted(job_type=TYPE)
    await bus.publisher.publish(topology.SUBMITTED, message)
    dispatch, resent = await take(bus, lane_for(TYPE))
    assert (dispatch.job_id, resent) == (message.job_id, False)
    await nothing_on(bus, topology.READY_MEDIUM)
    plain = submitted(job_type="simulate")  # served by both: its queue
    await bus.publisher.publish(topology.SUBMITTED, plain)
    dispatch, _ = await take(bus, topology.READY_MEDIUM)
    assert dispatch.job_id == plain.job_id


async def test_a_worker_that_does_not_serve_the_type_hands_it_back_to_the_lane(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, workers: list[asyncio.Task[None]]
) -> None:
    """The view said every consumer serves it; one that does not got it (it joined since)."""
    message, first = await served_by_one(bus, workers)
    await hand_back(bus, message.job_id, "w-old")
    again, resent = await take(bus, lane_for(TYPE))
    assert (again.job_id, again.attempt, resent) == (first.job_id, 1, True)
    assert again.dispatched_at <= utcnow()
    row = await wait_status(db, message.job_id, "queued")
    assert (row.attempt, row.last_error) == (1, None)  # not failed, no attempt spent
    assert f"handed back by w-old: it does not serve {TYPE!r}" in await timeline_reasons(
        db, message.job_id
    )


@pytest.mark.short_lease
async def test_a_handed_back_job_that_waits_goes_out_as_a_copy_when_a_worker_arrives(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, workers: list[asyncio.Task[None]]
) -> None:
    """Its first message was published (and may still be somewhere): claimed before it runs."""
    message, _ = await served_by_one(bus, workers)
    workers.pop().cancel()  # the only worker serving the type goes away
    await asyncio.sleep(3.0)  # three leases of silence (1 s here)
    await hand_back(bus, message.job_id, "w-old")

    async def waiting() -> bool:
        row = await job_row(db, message.job_id)
        return row is not None and row.waiting_reason is not None

    await eventually(waiting, what="the handed-back job waiting for a worker of its type")
    row = await job_row(db, message.job_id)
    assert row.waiting_unsent is False
    workers.append(asyncio.create_task(beating(bus, beat("w-next", TYPE))))
    dispatch, resent = await take(bus, topology.READY_MEDIUM, timeout=20)  # its only consumer
    assert (dispatch.job_id, dispatch.attempt, resent) == (message.job_id, 1, True)


async def test_workers_are_live_by_how_far_the_scheduler_has_read_never_by_its_clock(
    db: AsyncEngine,
) -> None:
    """A scheduler back from a crash has not read the heartbeats sent meanwhile: by its own
    clock every worker would look dead and every dispatch would wait (and go out later as a
    copy, a lease late)."""
    now = utcnow()

    async def seen(worker_id: str, ago: float) -> None:
        at = now - timedelta(seconds=ago)
        async with db.begin() as connection:
            await connection.execute(
                insert(worker_registry).values(
                    id=worker_id,
                    hostname="h",
                    pid=1,
                    version="1",
                    queues=[],
                    concurrency=1,
                    active_jobs=0,
                    started_at=at,
                    last_heartbeat_at=at,
                    types=["simulate"],
                )
            )

    async def read_up_to(ago: float | None) -> None:
        async with db.begin() as connection:
            await connection.execute(delete(read_horizons))
            if ago is not None:
                horizon = now - timedelta(seconds=ago)
                for queue in LEASE_QUEUES:
                    await connection.execute(
                        insert(read_horizons).values(replica_id="r", queue=queue, horizon=horizon)
                    )

    async def live() -> set[str]:
        async with db.connect() as connection:
            found = await live_workers(connection, lease_seconds=10, stale_after=90)
        return {worker.worker_id for worker in found}

    await seen("w-recent", 30)  # its latest heartbeat the scheduler read, before a crash
    await seen("w-gone", 45)  # silent for more than a lease before that one
    await read_up_to(31)  # read up to just before the crash
    assert await live() == {"w-recent"}
    await read_up_to(None)  # every replica just started: judged by the latest heartbeat read
    assert await live() == {"w-recent"}
    await read_up_to(0)  # read up to now: nothing sent for 30 s, dead
    assert await live() == set()
