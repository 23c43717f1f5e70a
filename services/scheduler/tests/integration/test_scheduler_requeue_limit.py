"""The ack policy in the scheduler: a message that always fails is stored, not requeued for
ever; a ready message a worker rejected comes back through jobs.dead and is re-dispatched."""

from __future__ import annotations

from functools import partial

import pytest
from aio_pika.abc import AbstractIncomingMessage
from prometheus_client import REGISTRY
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.settings import Settings

from .conftest import (
    eventually,
    job_row,
    next_dispatch,
    poison_reasons,
    submitted,
    timeline_reasons,
    wait_status,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings) -> Settings:
    return scheduler_settings.model_copy(
        update={
            "consumer_max_requeues": 2,
            "consumer_requeue_pause_seconds": 0.01,
            "consumer_requeue_pause_max_seconds": 0.02,
        }
    )


def settled(queue: str, action: str) -> float:
    value = REGISTRY.get_sample_value(
        "jobs_deliveries_settled_total", {"queue": queue, "action": action}
    )
    return value or 0.0


async def test_a_submission_that_always_fails_is_stored_as_poison_after_the_requeue_limit(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    # Parses, but PostgreSQL refuses \u0000 in jsonb: every attempt to record it fails. Alone
    # in its message and its batch (a refused job among others is stored as poison at once,
    # test_scheduler_intake.py), it goes through the ack policy's requeues.
    broken = submitted(payload={"text": "nul \u0000 inside"})
    fine = submitted()
    limit_before = settled(topology.SUBMITTED, "requeue_limit")
    requeues_before = settled(topology.SUBMITTED, "requeue")
    await bus.publisher.publish(topology.SUBMITTED, broken)

    (reason,) = await eventually(
        partial(poison_reasons, db, broken.message_id),
        what="the failing submission in poison_messages",
    )
    assert reason.startswith("requeue_limit: still failing after 2 requeues: ")
    await bus.publisher.publish(topology.SUBMITTED, fine)
    await wait_status(db, fine.job_id, "queued")
    assert (await job_row(db, fine.job_id)) is not None
    assert await job_row(db, broken.job_id) is None
    assert settled(topology.SUBMITTED, "requeue") - requeues_before == 2
    assert settled(topology.SUBMITTED, "requeue_limit") - limit_before == 1
    # Settled for good: nothing waits in the broker.
    queue = await bus.channel.get_queue(topology.SUBMITTED)
    assert (await queue.declare()).message_count == 0


async def test_a_ready_message_a_worker_rejected_is_redispatched(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    ready = bus.topology.queues[topology.READY_MEDIUM]

    async def take() -> AbstractIncomingMessage | None:
        return await ready.get(no_ack=False, fail=False)

    delivery = await eventually(take, what="the first dispatch")
    # What a worker does past its requeue limit: reject to the queue's dead-letter exchange.
    await delivery.reject(requeue=False)

    again = await next_dispatch(bus)
    assert (again.job_id, again.attempt) == (message.job_id, 1)
    row = await wait_status(db, message.job_id, "queued")
    assert row.expired_count == 1
    assert "ready message rejected; re-dispatched" in await timeline_reasons(db, message.job_id)
