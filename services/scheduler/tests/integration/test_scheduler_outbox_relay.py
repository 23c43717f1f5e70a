"""The outbox relay publishes a dispatch once: a relay pass that fails after the broker
confirmed its publishes (a deadlock victim, a cancelled task) must not publish them again.
And the reconciler's clock: never a lost message while the dispatch waits in the outbox,
restarted for a dispatch published late."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobDispatch, JobSubmitted, parse_message
from jobs_common.jobstore import dead_letters, jobs, outbox
from jobs_common.rabbit import Publisher, RabbitBus
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.outbox_relay import relay_outbox_once
from jobs_scheduler.adapters.reconciler import reconcile_lost_dispatches
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
        relay = asyncio.create_task(relay_outbox_once(db, publishers, 100, 5.0))

        async def published() -> JobDispatch | None:
            message = await ready.get(no_ack=True, fail=False)
            return None if message is None else parse_message(JobDispatch, message.body)

        first = await eventually(published, what="the dispatch on the ready queue")
        assert (first.job_id, first.attempt) == (job.job_id, 1)
        await asyncio.sleep(0.3)  # the pass now waits for the locked row, if it needs it
        relay.cancel()  # ... and fails there, as a deadlock victim would
        await asyncio.gather(relay, return_exceptions=True)
        await holder.rollback()
    assert await relay_outbox_once(db, publishers, 100, 5.0) == 0  # nothing left to publish
    await asyncio.sleep(0.3)
    assert await ready.get(no_ack=True, fail=False) is None  # published exactly once


async def record(db: AsyncEngine, settings: Settings) -> JobSubmitted:
    job = submitted(priority=2)
    async with db.begin() as connection:
        changes = Changes()
        await record_jobs(connection, changes, [job], job_defaults(settings))
        await changes.flush(connection)
    return job


async def queued_at(db: AsyncEngine, job: JobSubmitted) -> datetime:
    async with db.connect() as connection:
        value = (
            await connection.execute(select(jobs.c.queued_at).where(jobs.c.id == job.job_id))
        ).scalar_one()
    assert value is not None
    return value  # type: ignore[no-any-return]


async def test_a_dispatch_still_in_the_outbox_is_never_taken_for_lost(
    db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """The broker is away: the dispatch waits in the outbox, its clock runs past the limit."""
    job = await record(db, scheduler_settings)
    async with db.begin() as connection:
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == job.job_id)
            .values(queued_at=func.now() - timedelta(minutes=10))
        )
        defaults = job_defaults(scheduler_settings)
        assert await reconcile_lost_dispatches(connection, Changes(), 100, 60.0, defaults) == 0
        await connection.execute(delete(outbox).where(outbox.c.job_id == job.job_id))
        assert await reconcile_lost_dispatches(connection, Changes(), 100, 60.0, defaults) == 1


async def test_a_dispatch_published_late_restarts_its_clock_and_an_early_one_keeps_it(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    publishers = {
        topology.JOBS_EXCHANGE: Publisher(client_bus.topology.jobs),
        topology.EVENTS_EXCHANGE: Publisher(client_bus.topology.events),
    }
    early, late = await record(db, scheduler_settings), await record(db, scheduler_settings)
    ten_minutes_ago = func.now() - timedelta(minutes=10)
    async with db.begin() as connection:  # the late one waited ten minutes in the outbox
        await connection.execute(
            update(outbox).where(outbox.c.job_id == late.job_id).values(created_at=ten_minutes_ago)
        )
        await connection.execute(
            update(jobs).where(jobs.c.id == late.job_id).values(queued_at=ten_minutes_ago)
        )
    early_clock = await queued_at(db, early)
    assert await relay_outbox_once(db, publishers, 100, 5.0) == 2
    assert await queued_at(db, early) == early_clock  # no write to jobs for it
    restarted = await queued_at(db, late)
    assert restarted > early_clock  # from about when the broker took it


async def test_a_job_whose_ready_messages_keep_getting_lost_is_dead_at_the_limit(
    db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """Lost messages count like messages that died in the broker (ttl_redispatch_limit):
    below the limit a new attempt is dispatched, at it the job is dead, not re-dispatched
    for ever."""
    defaults = replace(job_defaults(scheduler_settings), ttl_redispatch_limit=2)
    below, at = await record(db, scheduler_settings), await record(db, scheduler_settings)
    async with db.begin() as connection:
        await connection.execute(delete(outbox))  # both published, then lost by the broker
        for job, lost_before in ((below, 1), (at, 2)):
            await connection.execute(
                update(jobs)
                .where(jobs.c.id == job.job_id)
                .values(queued_at=func.now() - timedelta(minutes=10), expired_count=lost_before)
            )
        changes = Changes()
        assert await reconcile_lost_dispatches(connection, changes, 100, 60.0, defaults) == 2
        await changes.flush(connection)
    async with db.connect() as connection:
        rows = {
            row.id: row
            for row in await connection.execute(
                select(jobs.c.id, jobs.c.status, jobs.c.attempt, jobs.c.expired_count)
            )
        }
        dead = (
            await connection.execute(
                select(dead_letters.c.reason).where(dead_letters.c.job_id == at.job_id)
            )
        ).scalar_one()
    assert (rows[below.job_id].status, rows[below.job_id].attempt) == ("queued", 2)
    assert rows[below.job_id].expired_count == 2
    assert rows[at.job_id].status == "dead"
    assert dead == "ttl_expired"
