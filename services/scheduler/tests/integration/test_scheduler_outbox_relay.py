"""The outbox relay publishes a dispatch once, plus a marked copy when it cannot know: a relay
pass that fails after the broker confirmed its publishes (a deadlock victim, a cancelled task,
the process killed), or a publish whose confirm was lost, is sent again at once as a copy
(``x-jobs-copy``), which workers claim before running (issue 31: recovery in seconds). And the
reconciler's clock: never a lost message while the dispatch waits in the outbox, restarted for
a dispatch published late."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import (
    COPY_HEADER,
    FRESH_HEADER,
    JobDispatch,
    JobSubmitted,
    parse_message,
    utcnow,
)
from jobs_common.jobstore import dead_letters, jobs, outbox, outbox_passes
from jobs_common.rabbit import Outgoing, Publisher, RabbitBus
from jobs_scheduler.adapters.outbox_relay import OutboxRelay
from jobs_scheduler.adapters.queue_depths import QueueDepths
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.intake import record_jobs
from jobs_scheduler.app.reconciler import reconcile_lost_dispatches
from jobs_scheduler.service import job_defaults
from jobs_scheduler.settings import Settings
from jobs_testing.worker_messages import make_dispatch

from .conftest import eventually, submitted

pytestmark = pytest.mark.integration


@pytest.fixture
async def client_bus(rabbit_url: str) -> AsyncIterator[RabbitBus]:
    bus = await RabbitBus.open(rabbit_url, name="relay-test")
    yield bus
    await bus.close()


def relay(db: AsyncEngine, publishers: dict[str, Publisher]) -> OutboxRelay:
    return OutboxRelay(db, publishers, limit=100, clock_slack=5.0, stop_grace=0.2)


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
        passing = asyncio.create_task(relay(db, publishers).pass_once())

        async def published() -> JobDispatch | None:
            message = await ready.get(no_ack=True, fail=False)
            return None if message is None else parse_message(JobDispatch, message.body)

        first = await eventually(published, what="the dispatch on the ready queue")
        assert (first.job_id, first.attempt) == (job.job_id, 1)
        # The pass ends, or waits for the locked row if it needs it (not a fixed pause: a
        # slow pass cancelled before it deleted its row would publish it again in this test)
        await eventually(
            lambda: _ended_or_waiting_for_a_lock(db, passing), what="the pass ended or blocked"
        )
        passing.cancel()  # ... and fails there, as a deadlock victim would
        await asyncio.gather(passing, return_exceptions=True)
        await holder.rollback()
    assert await relay(db, publishers).pass_once() == 0  # nothing left to publish
    await asyncio.sleep(0.3)
    assert await ready.get(no_ack=True, fail=False) is None  # published exactly once


async def _ended_or_waiting_for_a_lock(db: AsyncEngine, passing: asyncio.Task[int]) -> bool:
    if passing.done():
        return True
    async with db.connect() as connection:
        waiting = await connection.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        )
        return bool(waiting.scalar_one())


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
    assert await relay(db, publishers).pass_once() == 2
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


class Scripted(Publisher):
    """A real publisher, then what the test scripts: ``after`` runs once the broker confirmed
    (hang there as a killed process would, or fail as a lost connection would)."""

    def __init__(self, real: Publisher, after: Callable[[], Awaitable[None]]) -> None:
        super().__init__(real.exchange)
        self.after = after

    async def publish_many(self, items: Sequence[Outgoing]) -> list[BaseException | None]:
        outcomes = await super().publish_many(items)
        try:
            await self.after()
        except Exception as exc:  # each publish failed after it was sent
            return [exc] * len(items)
        return outcomes


async def hang() -> None:
    await asyncio.Event().wait()


async def connection_lost() -> None:
    raise ConnectionError("connection lost before the confirm arrived")


async def ready_messages(client_bus: RabbitBus) -> list[JobDispatch]:
    ready = client_bus.topology.queues[topology.READY_MEDIUM]
    await asyncio.sleep(0.2)
    found = []
    while (message := await ready.get(no_ack=True, fail=False)) is not None:
        found.append(parse_message(JobDispatch, message.body))
    return found


async def unlocked_outbox_rows(db: AsyncEngine) -> int:
    """How many outbox rows no transaction holds locked (tried with ``SKIP LOCKED``, as a
    pass locks them; the probe's own locks go with its rollback)."""
    async with db.connect() as connection:
        rows = await connection.execute(select(outbox.c.id).with_for_update(skip_locked=True))
        return len(rows.all())


async def dead_pass_gone(db: AsyncEngine, rows: int = 1) -> None:
    """Wait until the cancelled ("killed") pass's row locks are gone, as a killed process's
    go with its connection: the cancelled pass rolls back its transaction after
    ``pass_once`` has already raised (``finish_despite_cancel`` does not wait for it), and a
    pass meanwhile skips the rows it still holds."""

    async def released() -> bool:
        return await unlocked_outbox_rows(db) >= rows

    await eventually(released, what="the killed pass's row locks released")


async def outbox_rows(db: AsyncEngine) -> list[Any]:
    async with db.connect() as connection:
        return list(await connection.execute(select(outbox.c.job_id)))


async def pass_rows(db: AsyncEngine) -> list[Any]:
    async with db.connect() as connection:
        return list(await connection.execute(select(outbox_passes.c.ids)))


async def ready_copies(client_bus: RabbitBus) -> list[tuple[uuid.UUID, int, bool]]:
    """The ready messages waiting: (job id, attempt, marked as a copy)."""
    ready = client_bus.topology.queues[topology.READY_MEDIUM]
    await asyncio.sleep(0.2)
    found = []
    while (message := await ready.get(no_ack=True, fail=False)) is not None:
        dispatch = parse_message(JobDispatch, message.body)
        copy = bool((message.headers or {}).get(COPY_HEADER))
        found.append((dispatch.job_id, dispatch.attempt, copy))
    return found


async def test_a_relay_killed_after_the_confirm_publishes_the_dispatch_again_as_a_copy(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    """The order of issue 19's double run: the broker confirmed the ready message, the
    scheduler died before its relay recorded it as sent, the restarted relay found the row.
    It cannot know whether the broker has it: it sends it again at once, marked as a copy
    (a worker claims a copy before it runs it), instead of leaving it to the reconciler."""
    job = await record(db, scheduler_settings)
    real = Publisher(client_bus.topology.jobs)
    dying = relay(db, {topology.JOBS_EXCHANGE: Scripted(real, after=hang)})
    passing = asyncio.create_task(dying.pass_once())
    first = await eventually(lambda: ready_copies(client_bus), what="the confirmed dispatch")
    assert first == [(job.job_id, 1, False)]
    passing.cancel()  # kill -9: the pass never settles (it hangs past its stop grace)
    await asyncio.gather(passing, return_exceptions=True)
    await dead_pass_gone(db)
    assert len(await pass_rows(db)) == 1  # what the dead pass may have published
    clock = await queued_at(db, job)

    restarted = relay(db, {topology.JOBS_EXCHANGE: real})
    assert await restarted.pass_once() == 1
    assert await ready_copies(client_bus) == [(job.job_id, 1, True)]  # the same attempt, marked
    assert await outbox_rows(db) == []
    assert await pass_rows(db) == []
    assert await queued_at(db, job) > clock
    assert await restarted.pass_once() == 0  # sent once more, not again and again


async def test_a_publish_lost_with_its_connection_is_sent_again_as_a_copy(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    """The publish went out and its confirm never came: the broker may hold the message, so
    the next pass sends the dispatch again marked as a copy (never unmarked twice)."""
    job = await record(db, scheduler_settings)
    clock = await queued_at(db, job)
    real = Publisher(client_bus.topology.jobs)
    failing = relay(db, {topology.JOBS_EXCHANGE: Scripted(real, after=connection_lost)})
    assert await failing.pass_once() == 0
    assert await ready_copies(client_bus) == [(job.job_id, 1, False)]
    assert len(await outbox_rows(db)) == 1 and len(await pass_rows(db)) == 1
    assert await relay(db, {topology.JOBS_EXCHANGE: real}).pass_once() == 1
    assert await ready_copies(client_bus) == [(job.job_id, 1, True)]
    assert await outbox_rows(db) == [] and await pass_rows(db) == []
    assert await queued_at(db, job) >= clock


async def test_a_cancel_request_whose_publish_failed_is_published_again(
    db: AsyncEngine, client_bus: RabbitBus
) -> None:
    """Other messages than dispatches are idempotent for their consumers: released, sent
    again by the next pass."""
    workers = await client_bus.channel.declare_queue(exclusive=True)  # a worker's control queue
    await workers.bind(client_bus.topology.events, topology.CONTROL_CANCEL)
    changes = Changes()
    changes.cancel_attempt(uuid.uuid4(), 1, "cancel requested")
    async with db.begin() as connection:
        await changes.flush(connection)
    real = Publisher(client_bus.topology.events)
    failing = relay(db, {topology.EVENTS_EXCHANGE: Scripted(real, after=connection_lost)})
    assert await failing.pass_once() == 0
    assert len(await outbox_rows(db)) == 1 and await pass_rows(db) == []
    assert await relay(db, {topology.EVENTS_EXCHANGE: real}).pass_once() == 1
    assert await outbox_rows(db) == []
    await asyncio.sleep(0.2)
    assert (await workers.declare()).message_count == 2  # the unconfirmed copy, and this one


async def test_a_stopping_relay_settles_the_publishes_in_flight(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    """A graceful stop mid-pass waits for the confirms and deletes the rows, so a restart
    neither sends them again nor leaves them to the reconciler."""
    job = await record(db, scheduler_settings)
    real = Publisher(client_bus.topology.jobs)
    slow = OutboxRelay(
        db,
        {topology.JOBS_EXCHANGE: Scripted(real, after=lambda: asyncio.sleep(0.3))},
        limit=100,
        clock_slack=5.0,
        stop_grace=5.0,
    )
    passing = asyncio.create_task(slow.pass_once())
    await asyncio.sleep(0.1)
    passing.cancel()
    await asyncio.gather(passing, return_exceptions=True)
    assert await outbox_rows(db) == []
    assert [m.job_id for m in await ready_messages(client_bus)] == [job.job_id]


async def test_while_the_channel_is_closed_nothing_is_claimed(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    await record(db, scheduler_settings)
    channel = await client_bus.connection.channel()
    closed = Publisher(await channel.get_exchange(topology.JOBS_EXCHANGE))
    await channel.close()
    assert await relay(db, {topology.JOBS_EXCHANGE: closed}).pass_once() == 0
    assert len(await outbox_rows(db)) == 1 and await pass_rows(db) == []


async def fresh_windows(client_bus: RabbitBus) -> dict[tuple[uuid.UUID, bool], float]:
    """Each ready message's fresh window (FRESH_HEADER, in epoch seconds) by (job, copy)."""
    ready = client_bus.topology.queues[topology.READY_MEDIUM]
    await asyncio.sleep(0.2)
    found = {}
    while (message := await ready.get(no_ack=True, fail=False)) is not None:
        headers = message.headers or {}
        dispatch = parse_message(JobDispatch, message.body)
        if FRESH_HEADER in headers:
            key = (dispatch.job_id, bool(headers.get(COPY_HEADER)))
            found[key] = int(headers[FRESH_HEADER]) / 1000
    return found


async def test_a_dispatch_behind_a_backlog_is_fresh_until_it_drains_and_its_copy_asks_past_it(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    """300 ready messages ahead of it, drained at an assumed 100 jobs/s: a first delivery
    runs unasked for 5 + 3 s (not claimed for having waited its turn); the copy a later pass
    sends after this one died carries the same window, which its claim waits past."""
    filler = Publisher(client_bus.topology.jobs)
    for _ in range(300):
        await filler.publish(topology.READY_MEDIUM, make_dispatch("simulate", {}, priority=2))
    job = await record(db, scheduler_settings)
    real = Publisher(client_bus.topology.jobs)

    def with_depths(publisher: Publisher) -> OutboxRelay:
        return OutboxRelay(
            db,
            {topology.JOBS_EXCHANGE: publisher},
            limit=100,
            clock_slack=5.0,
            stop_grace=0.2,
            depths=QueueDepths(client_bus.connection),
            fresh_drain_per_second=100,
        )

    published_at = utcnow().timestamp()
    passing = asyncio.create_task(with_depths(Scripted(real, after=hang)).pass_once())
    await eventually(lambda: _depth_at_least(client_bus, 301), what="the first copy published")
    passing.cancel()  # killed before it recorded the publish
    await asyncio.gather(passing, return_exceptions=True)
    await dead_pass_gone(db)
    assert await with_depths(real).pass_once() == 1  # the copy
    windows = await fresh_windows(client_bus)
    first, copy = windows[(job.job_id, False)], windows[(job.job_id, True)]
    assert 7.5 <= first - published_at <= 9.5  # 5 s + 301 / 100 jobs/s
    assert copy == first


async def _depth_at_least(client_bus: RabbitBus, count: int) -> bool:
    declared = await client_bus.topology.queues[topology.READY_MEDIUM].declare()
    return (declared.message_count or 0) >= count


async def test_a_resent_dispatch_keeps_its_claim_from_its_first_dispatch(
    db: AsyncEngine, client_bus: RabbitBus, scheduler_settings: Settings
) -> None:
    """A hand-back's or a release's dispatch is claimed from the attempt's first dispatch: a
    window of the pass that sends it again would only push its claim later."""
    job = await record(db, scheduler_settings)
    relay_with_depths = OutboxRelay(
        db,
        {topology.JOBS_EXCHANGE: Publisher(client_bus.topology.jobs)},
        limit=100,
        clock_slack=5.0,
        depths=QueueDepths(client_bus.connection),
    )
    assert await relay_with_depths.pass_once() == 1  # its first dispatch
    async with db.begin() as connection:
        row = (await connection.execute(select(jobs).where(jobs.c.id == job.job_id))).one()
        changes = Changes()
        changes.dispatch(row, attempt=1, new_attempt=False, resent_after=utcnow())
        await changes.flush(connection)
    assert await relay_with_depths.pass_once() == 1
    ready = client_bus.topology.queues[topology.READY_MEDIUM]
    await asyncio.sleep(0.2)
    seen = []
    while (message := await ready.get(no_ack=True, fail=False)) is not None:
        dispatch = parse_message(JobDispatch, message.body)
        seen.append((dispatch.resent, FRESH_HEADER in (message.headers or {})))
    assert seen == [(False, True), (True, False)]
