"""The outbox relay publishes a dispatch once: a relay pass that fails after the broker
confirmed its publishes (a deadlock victim, a cancelled task) must not publish them again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobDispatch, parse_message
from jobs_common.jobstore import jobs
from jobs_common.rabbit import Publisher, RabbitBus
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.outbox_relay import relay_outbox_once
from jobs_scheduler.app import job_defaults
from jobs_scheduler.intake import record_jobs
from jobs_scheduler.settings import Settings

from .conftest import eventually, submitted

pytestmark = pytest.mark.integration


@pytest.fixture
async def client_bus(rabbit_url: str) -> AsyncIterator[RabbitBus]:
    bus = await RabbitBus.open(rabbit_url, name="relay-test")
    yield bus
    await bus.close()


async def test_a_pass_stuck_on_a_locked_job_row_does_not_publish_again(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    job = submitted(priority=2)
    async with db.begin() as connection:  # what a submitted batch leaves: the row, the outbox
        changes = Changes()
        await record_jobs(connection, changes, [job], job_defaults(scheduler_settings))
        await changes.flush(connection)
    publishers = {
        topology.JOBS_EXCHANGE: Publisher(client_bus.topology.jobs),
        topology.EVENTS_EXCHANGE: Publisher(client_bus.topology.events),
    }
    ready = client_bus.topology.queues[topology.READY_MEDIUM]
    async with db.connect() as holder:  # another transaction holds the job's row
        await holder.execute(select(jobs.c.id).where(jobs.c.id == job.job_id).with_for_update())
        relay = asyncio.create_task(relay_outbox_once(db, publishers, 100))

        async def published() -> JobDispatch | None:
            message = await ready.get(no_ack=True, fail=False)
            return None if message is None else parse_message(JobDispatch, message.body)

        first = await eventually(published, what="the dispatch on the ready queue")
        assert (first.job_id, first.attempt) == (job.job_id, 1)
        await asyncio.sleep(0.3)  # the pass now waits for the locked row, if it needs it
        relay.cancel()  # ... and fails there, as a deadlock victim would
        await asyncio.gather(relay, return_exceptions=True)
        await holder.rollback()
    assert await relay_outbox_once(db, publishers, 100) == 0  # nothing left to publish
    await asyncio.sleep(0.3)
    assert await ready.get(no_ack=True, fail=False) is None  # published exactly once
