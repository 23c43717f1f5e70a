"""The scheduler against real PostgreSQL and RabbitMQ: record, dispatch, results, retries."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aio_pika
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import (
    ErrorKind,
    JobDispatch,
    JobResult,
    JobRunning,
    RetryRequested,
    utcnow,
)
from jobs_common.jobstore import dead_letters, job_attempts, job_events, jobs, poison_messages
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters import metrics
from jobs_scheduler.service import Runtime
from jobs_scheduler.settings import Settings

from .conftest import (
    FAILURE,
    dead_letter_of,
    eventually,
    heartbeat,
    job_result,
    job_row,
    next_dispatch,
    submitted,
    timeline_reasons,
    wait_status,
)

pytestmark = pytest.mark.integration


def running(job_id: uuid.UUID, attempt: int) -> JobRunning:
    return JobRunning(job_id=job_id, attempt=attempt, worker_id="w1", started_at=utcnow())


def result(
    job_id: uuid.UUID, attempt: int, *, ok: bool = True, kind: ErrorKind = ErrorKind.RETRYABLE
) -> JobResult:
    if ok:
        return job_result(job_id, attempt, result={"answer": 42})
    return job_result(job_id, attempt, "failed", error=FAILURE.model_copy(update={"kind": kind}))


async def test_submitted_job_is_recorded_dispatched_and_succeeds(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted(priority=3)
    await bus.publisher.publish(topology.SUBMITTED, message)

    dispatch = await next_dispatch(bus, topology.READY_HIGH)
    assert (dispatch.job_id, dispatch.attempt) == (message.job_id, 1)
    assert dispatch.payload == message.payload
    row = await wait_status(db, message.job_id, "queued")
    assert (row.attempt, row.max_attempts, row.submitted_by) == (1, 3, "user@test.com")

    await bus.publisher.publish(topology.RUNNING, running(message.job_id, 1))
    await wait_status(db, message.job_id, "running")
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 1))
    row = await wait_status(db, message.job_id, "succeeded")
    assert row.result == {"answer": 42}

    async with db.connect() as connection:
        timeline = (
            await connection.execute(
                select(job_events.c.from_status, job_events.c.to_status)
                .where(job_events.c.job_id == message.job_id)
                .order_by(job_events.c.id)
            )
        ).all()
        attempt = (
            await connection.execute(
                select(job_attempts).where(job_attempts.c.job_id == message.job_id)
            )
        ).one()
    assert [tuple(t) for t in timeline] == [
        (None, "pending"),
        ("pending", "queued"),
        ("queued", "running"),
        ("running", "succeeded"),
    ]
    assert attempt.status == "succeeded"
    assert attempt.duration_ms is not None


async def test_duplicate_submissions_create_one_job_and_one_dispatch(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted()
    for _ in range(3):
        await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await wait_status(db, message.job_id, "queued")
    ready = bus.topology.queues[topology.READY_MEDIUM]
    # The three deliveries are consumed (queue drained) before we look for a second dispatch.
    submitted_queue = bus.topology.queues[topology.SUBMITTED]

    async def drained() -> bool:
        declared = await bus.channel.declare_queue(submitted_queue.name, passive=True)
        return declared.declaration_result.message_count == 0

    await eventually(drained, what="jobs.submitted drained")
    async with db.connect() as connection:
        count = (await connection.execute(select(func.count()).select_from(jobs))).scalar_one()
    assert count == 1
    assert await ready.get(no_ack=True, fail=False) is None


async def test_failures_retry_with_backoff_then_dead_letter_then_manual_retry(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted(max_attempts=2)
    await bus.publisher.publish(topology.SUBMITTED, message)
    first = await next_dispatch(bus)
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, first.attempt, ok=False))

    second = await next_dispatch(bus)
    assert second.attempt == 2
    row = await job_row(db, message.job_id)
    assert row.last_error == "it broke"

    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 2, ok=False))
    row = await wait_status(db, message.job_id, "dead")
    assert (row.attempt, row.last_error_class) == (2, "Boom")
    letter = await dead_letter_of(db, message.job_id)
    assert letter.reason == "max_attempts"
    assert letter.payload_snapshot["payload"] == message.payload

    retry = RetryRequested(
        job_id=message.job_id, requested_by="admin@test.com", requested_at=utcnow()
    )
    await bus.publisher.publish(topology.RETRY, retry)
    await bus.publisher.publish(topology.RETRY, retry)  # redelivered command: no effect
    third = await next_dispatch(bus)
    assert third.attempt == 3
    row = await wait_status(db, message.job_id, "queued")
    assert row.attempt_limit == 4  # a fresh budget of max_attempts
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 3))
    await wait_status(db, message.job_id, "succeeded")
    async with db.connect() as connection:
        resolved = (
            await connection.execute(
                select(dead_letters.c.resolution).where(dead_letters.c.job_id == message.job_id)
            )
        ).scalar_one()
    assert resolved == "requeued"


async def test_permanent_error_goes_dead_without_retries(bus: RabbitBus, db: AsyncEngine) -> None:
    message = submitted(max_attempts=5)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(
        topology.RESULTS, result(message.job_id, 1, ok=False, kind=ErrorKind.PERMANENT)
    )
    row = await wait_status(db, message.job_id, "dead")
    assert row.attempt == 1


async def test_stale_and_fenced_messages_change_nothing(bus: RabbitBus, db: AsyncEngine) -> None:
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    # A result for an attempt that was never dispatched is dropped.
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 7))
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 1))
    row = await wait_status(db, message.job_id, "succeeded")
    # A late running message for the finished attempt must not reopen the job.
    await bus.publisher.publish(topology.RUNNING, running(message.job_id, 1))
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 1, ok=False))
    marker = submitted()
    await bus.publisher.publish(topology.SUBMITTED, marker)
    await next_dispatch(bus)  # the scheduler has moved past the stale messages
    after = await job_row(db, message.job_id)
    assert (after.status, after.updated_at) == ("succeeded", row.updated_at)


async def test_unparseable_message_is_stored_as_poison_and_acked(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    await bus.topology.jobs.publish(
        aio_pika.Message(b"{not json", message_id="bad-1"), topology.RESULTS, mandatory=True
    )

    async def stored() -> bool:
        async with db.connect() as connection:
            rows = (await connection.execute(select(poison_messages))).all()
        return any(r.message_id == "bad-1" and r.queue == topology.RESULTS for r in rows)

    await eventually(stored, what="poison row")


async def test_expired_ready_message_is_redispatched_then_dead_after_the_limit(
    bus: RabbitBus, db: AsyncEngine, scheduler_settings: Settings
) -> None:
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    dispatch = await next_dispatch(bus)
    # Simulate the broker dead-lettering the ready message (as TTL expiry does).
    dead_lettered = aio_pika.Message(
        dispatch.to_json(),
        headers={"x-death": [{"reason": "expired", "queue": topology.READY_MEDIUM, "count": 1}]},
    )
    await bus.topology.jobs.publish(dead_lettered, topology.DEAD, mandatory=True)
    # The same dead-lettered message again (redelivered after a crash): no second dispatch.
    duplicates = metrics.MESSAGES.labels(topology.DEAD, "duplicate")
    seen_before = duplicates._value.get()
    await bus.topology.jobs.publish(dead_lettered, topology.DEAD, mandatory=True)
    again = await next_dispatch(bus)
    assert (again.job_id, again.attempt) == (message.job_id, 1)
    row = await job_row(db, message.job_id)
    assert (row.status, row.expired_count) == ("queued", 1)

    async def duplicate_seen() -> bool:
        return duplicates._value.get() > seen_before

    await eventually(duplicate_seen, what="the redelivered dead-letter recognised")
    assert await bus.topology.queues[topology.READY_MEDIUM].get(no_ack=True, fail=False) is None

    # At the limit, the next expiry dead-letters the job instead.
    async with db.begin() as connection:
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == message.job_id)
            .values(expired_count=scheduler_settings.ttl_redispatch_limit)
        )
    await bus.topology.jobs.publish(
        aio_pika.Message(again.to_json(), headers=dead_lettered.headers),
        topology.DEAD,
        mandatory=True,
    )
    row = await wait_status(db, message.job_id, "dead")
    assert row.last_error_class == "ReadyMessageExpired"
    reason = (await dead_letter_of(db, message.job_id)).reason
    assert reason == "ttl_expired"


async def test_reaper_retries_a_running_attempt_past_its_timeout(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted(timeout_seconds=1, max_attempts=2)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(topology.RUNNING, running(message.job_id, 1))
    await wait_status(db, message.job_id, "running")
    second = await next_dispatch(bus, timeout=15)
    assert second.attempt == 2
    async with db.connect() as connection:
        first_attempt = (
            await connection.execute(
                select(job_attempts).where(
                    job_attempts.c.job_id == message.job_id, job_attempts.c.attempt == 1
                )
            )
        ).one()
    assert first_attempt.status == "timed_out"
    # The worker's late result for attempt 1 is fenced off.
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 1))
    await bus.publisher.publish(topology.RESULTS, result(message.job_id, 2))
    row = await wait_status(db, message.job_id, "succeeded")
    assert row.attempt == 2


async def test_ready_fails_when_the_broker_no_longer_counts_a_consumer(
    scheduler: Runtime,
) -> None:
    assert await scheduler.ready() == {
        "database": True,
        "broker": True,
        "consumers": True,
        "loops": True,
    }
    consumer = scheduler.consumers.consumers[0]
    # The consumer disappears behind the runtime's back (as after a bad reconnect).
    assert consumer._consumer_tag is not None
    await consumer.queue.cancel(consumer._consumer_tag)
    assert (await scheduler.ready())["consumers"] is False


async def test_a_handler_s_retry_later_sets_the_delay_in_place_of_the_policy(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """RetryLater(delay_seconds=90) from the SDK: the retry waits 90 s, not the 50 ms the
    test's exponential policy would give attempt 1."""
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    later = FAILURE.model_copy(update={"retry_after_seconds": 90.0})
    await bus.publisher.publish(
        topology.RESULTS, job_result(message.job_id, 1, "failed", error=later)
    )
    row = await wait_status(db, message.job_id, "scheduled")
    assert 85 <= (row.run_at - utcnow()).total_seconds() <= 90
    assert "retry in 90000 ms" in await timeline_reasons(db, message.job_id)


async def test_a_job_of_a_named_queue_is_dispatched_to_that_queue_s_ready_queue(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """The relay declares jobs.ready.<queue>.<priority> before the first dispatch to it: the
    job waits there (for a worker of that queue), never in the shared ready queues."""
    message = submitted(priority=3).model_copy(update={"queue": "acme"})
    await bus.publisher.publish(topology.SUBMITTED, message)
    row = await wait_status(db, message.job_id, "queued")
    assert row.queue == "acme"
    name = topology.ready_queue_for(3, "acme")

    async def dispatched() -> JobDispatch | None:
        # A channel each try: asking for a queue the relay has not declared yet closes it.
        channel = await bus.connection.channel()
        try:
            named = await channel.declare_queue(name, passive=True)
            delivery = await named.get(no_ack=True, fail=False)
        except aio_pika.exceptions.ChannelClosed:
            return None
        finally:
            if not channel.is_closed:
                await channel.close()
        return JobDispatch.model_validate_json(delivery.body) if delivery else None

    dispatch = await eventually(dispatched, what="the dispatch on jobs.ready.acme.high")
    assert (dispatch.job_id, dispatch.attempt) == (message.job_id, 1)
    shared = await bus.channel.get_queue(topology.READY_HIGH)
    assert (await shared.declare()).message_count == 0


async def test_a_heartbeat_records_the_running_attempt_s_progress(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """The handler's ctx.progress rides on the heartbeat; one without progress keeps it."""
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(topology.RUNNING, running(message.job_id, 1))
    await wait_status(db, message.job_id, "running")
    beat = heartbeat("w1", (message.job_id, 1))
    listed = beat.active[0].model_copy(update={"progress": 40.0, "progress_message": "4/10"})
    await bus.publisher.publish(topology.HEARTBEAT, beat.model_copy(update={"active": [listed]}))

    async def recorded() -> Any:
        row = await job_row(db, message.job_id)
        return row.progress if row is not None and row.progress else None

    progress = await eventually(recorded, what="the progress on the job's row")
    assert progress == {"attempt": 1, "percent": 40.0, "message": "4/10"}
    await bus.publisher.publish(topology.HEARTBEAT, heartbeat("w1", (message.job_id, 1)))
    await asyncio.sleep(0.5)
    assert (await job_row(db, message.job_id)).progress == progress
