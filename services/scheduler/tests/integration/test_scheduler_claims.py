"""Claims of redelivered attempts (issue 31): a redelivered copy runs only when no live
worker can still hold its attempt; the scheduler answers every claim with a ClaimVerdict."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime

import aio_pika
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import ClaimVerdict, ErrorKind, JobError, JobRunning, utcnow
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.service import BrokerOutageLeases, Runtime
from jobs_testing.waiting import eventually

from .conftest import (
    SHORT_LEASE,
    heartbeat,
    job_result,
    job_row,
    next_dispatch,
    submitted,
    timeline_reasons,
    wait_status,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60), pytest.mark.short_lease]


@pytest.fixture
async def answers(bus: RabbitBus) -> aio_pika.abc.AbstractQueue:
    queue = await bus.channel.declare_queue(exclusive=True, auto_delete=True)
    await queue.bind(bus.topology.events, routing_key=topology.CONTROL_CLAIM)
    return queue


async def claim(
    bus: RabbitBus,
    answers: aio_pika.abc.AbstractQueue,
    job_id: uuid.UUID,
    worker_id: str,
    *,
    since: datetime,
    attempt: int = 1,
) -> ClaimVerdict:
    """Ask as a worker with a redelivered copy would, and wait for the answer."""
    ask = JobRunning(
        job_id=job_id,
        attempt=attempt,
        worker_id=worker_id,
        started_at=utcnow(),
        redelivered=True,
        claim_since=since,
    )
    await bus.publisher.publish(topology.RUNNING, ask)

    async def answer() -> ClaimVerdict | None:
        while (message := await answers.get(no_ack=True, fail=False)) is not None:
            verdict = ClaimVerdict.model_validate_json(message.body)
            if verdict.job_id == job_id and verdict.worker_id == worker_id:
                return verdict
        return None

    return await eventually(answer, what=f"the answer to {worker_id}'s claim")


async def queued_job(bus: RabbitBus, db: AsyncEngine) -> uuid.UUID:
    message = submitted(max_attempts=5)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await wait_status(db, message.job_id, "queued")
    return message.job_id


async def beating(bus: RabbitBus, worker_id: str, job_id: uuid.UUID) -> None:
    """A live worker that holds the attempt (announced or not): it lists it every 0.2 s."""
    while True:
        await bus.publisher.publish(topology.HEARTBEAT, heartbeat(worker_id, (job_id, 1)))
        await asyncio.sleep(0.2)


async def test_a_copy_of_an_attempt_a_live_worker_runs_waits_then_is_skipped(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, answers: aio_pika.abc.AbstractQueue
) -> None:
    """The broker cut w-first's connection and redelivered to w-second: w-first still runs
    the handler unannounced (its heartbeat lists it). w-second waits, however long, and skips
    once w-first's result is in: the handler ran once."""
    job_id = await queued_job(bus, db)
    since = utcnow()
    holder = asyncio.create_task(beating(bus, "w-first", job_id))
    try:
        for _ in range(4):  # four leases: a live holder keeps the claim waiting
            verdict = await claim(bus, answers, job_id, "w-second", since=since)
            assert verdict.verdict == "wait", verdict
            assert verdict.retry_after is not None and verdict.retry_after > 0
            await asyncio.sleep(SHORT_LEASE)
        row = await job_row(db, job_id)
        assert (row.status, row.worker_id) == ("running", "w-first")  # started by the listing
        await bus.publisher.publish(topology.RESULTS, job_result(job_id, 1, worker_id="w-first"))
        await wait_status(db, job_id, "succeeded")
    finally:
        holder.cancel()
    verdict = await claim(bus, answers, job_id, "w-second", since=since)
    assert verdict.verdict == "skip", verdict
    assert (await job_row(db, job_id)).worker_id == "w-first"


async def test_a_copy_of_an_attempt_nobody_reported_runs_once_a_lease_passed_in_silence(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, answers: aio_pika.abc.AbstractQueue
) -> None:
    """The first holder died before it reported anything (a quick attempt sends only its
    result): the claim waits a lease of heartbeats and results read, then runs."""
    job_id = await queued_job(bus, db)
    since = utcnow()
    first = await claim(bus, answers, job_id, "w-second", since=since)
    assert first.verdict == "wait", first
    assert (await job_row(db, job_id)).status == "queued"

    async def granted() -> ClaimVerdict | None:
        verdict = await claim(bus, answers, job_id, "w-second", since=since)
        return verdict if verdict.verdict == "run" else None

    await eventually(granted, what="the claim granted after a lease", timeout=SHORT_LEASE * 10)
    assert (utcnow() - since).total_seconds() >= SHORT_LEASE
    row = await job_row(db, job_id)
    assert (row.status, row.attempt, row.worker_id) == ("running", 1, "w-second")
    assert "claimed; started on w-second" in await timeline_reasons(db, job_id)
    # Asked again (the answer was lost): still this worker's.
    again = await claim(bus, answers, job_id, "w-second", since=since)
    assert again.verdict == "run"
    await bus.publisher.publish(topology.RESULTS, job_result(job_id, 1, worker_id="w-second"))
    await wait_status(db, job_id, "succeeded")


async def test_a_copy_of_a_silent_workers_attempt_is_taken_over_or_skipped_never_doubled(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, answers: aio_pika.abc.AbstractQueue
) -> None:
    """w-first announced the attempt and died: its lease runs out. The copy waits while the
    lease lives; then either the claim takes the attempt over, or the reaper got there first
    and the copy is skipped (the retry runs as attempt 2). Never both."""
    job_id = await queued_job(bus, db)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=job_id, attempt=1, worker_id="w-first", started_at=utcnow()),
    )
    await wait_status(db, job_id, "running")
    since = utcnow()
    first = await claim(bus, answers, job_id, "w-second", since=since)
    assert first.verdict == "wait", first

    async def decided() -> ClaimVerdict | None:
        verdict = await claim(bus, answers, job_id, "w-second", since=since)
        return None if verdict.verdict == "wait" else verdict

    verdict = await eventually(decided, what="the claim decided", timeout=SHORT_LEASE * 15)
    row = await job_row(db, job_id)
    if verdict.verdict == "run":
        assert (row.attempt, row.worker_id, row.status) == (1, "w-second", "running")
        assert "redelivered; taken over by w-second" in await timeline_reasons(db, job_id)
        # The worker that lost the attempt reports it stopped: that must not end the job.
        lost = JobError(kind=ErrorKind.PERMANENT, error_class="Cancelled", message="lease lost")
        await bus.publisher.publish(
            topology.RESULTS,
            job_result(job_id, 1, "cancelled", worker_id="w-first", error=lost),
        )
        await bus.publisher.publish(
            topology.RESULTS, job_result(job_id, 1, worker_id="w-second", result={"by": "w2"})
        )
        done = await wait_status(db, job_id, "succeeded")
        assert done.result == {"by": "w2"}
    else:  # reaped: attempt 1 is lost, its retry waits or runs as attempt 2
        assert verdict.verdict == "skip"
        assert (row.attempt, row.status) != (1, "running"), verdict


async def test_a_copy_of_a_finished_attempt_is_skipped_at_once(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, answers: aio_pika.abc.AbstractQueue
) -> None:
    job_id = await queued_job(bus, db)
    await bus.publisher.publish(topology.RESULTS, job_result(job_id, 1, worker_id="w-first"))
    await wait_status(db, job_id, "succeeded")
    verdict = await claim(bus, answers, job_id, "w-second", since=utcnow())
    assert verdict.verdict == "skip"
    stale = await claim(bus, answers, job_id, "w-second", since=utcnow(), attempt=2)
    assert stale.verdict == "skip"
    assert (await job_row(db, job_id)).worker_id == "w-first"


async def test_after_a_broker_outage_every_running_lease_runs_a_lease_from_then(
    scheduler: Runtime, bus: RabbitBus, db: AsyncEngine, answers: aio_pika.abc.AbstractQueue
) -> None:
    """The workers could not send heartbeats while the broker was away: when the scheduler's
    connection is back, a claim of a copy must not take the attempt from a worker still
    reconnecting (a quick-pass round sent a slow job twice so)."""
    job_id = await queued_job(bus, db)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=job_id, attempt=1, worker_id="w-first", started_at=utcnow()),
    )
    await wait_status(db, job_id, "running")
    await BrokerOutageLeases(db, lease_seconds=30).extend()  # the connection came back
    await asyncio.sleep(SHORT_LEASE * 3)  # no heartbeat since: its own lease would have run out
    verdict = await claim(bus, answers, job_id, "w-second", since=utcnow())
    assert verdict.verdict == "wait", verdict
    row = await job_row(db, job_id)
    assert (row.status, row.worker_id) == ("running", "w-first")
    assert (row.lease_expires_at - utcnow()).total_seconds() > 20
