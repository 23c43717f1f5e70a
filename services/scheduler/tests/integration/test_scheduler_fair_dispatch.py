"""The bounded ready window and fair dispatch (docs/flow-control.md, "Fair dispatch"): the
relay keeps at most a window of each ready queue in the broker and the rest in the outbox,
and what it sends of a queue's waiting dispatches goes to the projects with work waiting in
turn, by weight, so one project's flood delays another's job by a round, not by its length."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobDispatch, JobSubmitted, parse_message
from jobs_common.jobstore import jobs, outbox, project_flow
from jobs_common.rabbit import Publisher, RabbitBus
from jobs_scheduler.adapters.outbox_relay import OutboxRelay
from jobs_scheduler.adapters.queue_depths import QueueDepths
from jobs_scheduler.adapters.ready_window import ReadyWindow
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.intake import record_jobs
from jobs_scheduler.service import job_defaults
from jobs_scheduler.settings import Settings

from .conftest import submitted

pytestmark = pytest.mark.integration

FLOOD = uuid.uuid4()
SINGLE = uuid.uuid4()


@pytest.fixture
async def broker(rabbit_url: str) -> AsyncIterator[RabbitBus]:
    bus = await RabbitBus.open(rabbit_url, name="fair-dispatch-test")
    yield bus
    await bus.close()


def make_relay(db: AsyncEngine, bus: RabbitBus, *, window: int, limit: int = 100) -> OutboxRelay:
    publishers = {
        topology.JOBS_EXCHANGE: Publisher(bus.topology.jobs),
        topology.EVENTS_EXCHANGE: Publisher(bus.topology.events),
    }
    depths = QueueDepths(bus.connection)
    return OutboxRelay(
        db,
        publishers,
        limit=limit,
        clock_slack=5.0,
        depths=depths,
        window=ReadyWindow(depths, size=window),
    )


async def record(
    db: AsyncEngine, settings: Settings, project: uuid.UUID, count: int, *, priority: int = 2
) -> list[JobSubmitted]:
    batch = [submitted(project_id=project, priority=priority) for _ in range(count)]
    async with db.begin() as connection:
        changes = Changes()
        await record_jobs(connection, changes, batch, job_defaults(settings))
        await changes.flush(connection)
    return batch


async def drain(bus: RabbitBus, queue: str, most: int | None = None) -> list[uuid.UUID]:
    """The jobs of the ready messages taken off ``queue`` (at most ``most``), in order."""
    ready = bus.topology.queues[queue]
    taken: list[uuid.UUID] = []
    while most is None or len(taken) < most:
        message = await ready.get(no_ack=True, fail=False)
        if message is None:
            break
        taken.append(parse_message(JobDispatch, message.body).job_id)
    return taken


async def outbox_order(db: AsyncEngine) -> list[uuid.UUID]:
    """The jobs of the dispatches in the outbox, in the order they were written."""
    async with db.connect() as connection:
        rows = await connection.execute(select(outbox.c.job_id).order_by(outbox.c.id))
    return [row[0] for row in rows]


async def waiting_in_outbox(db: AsyncEngine) -> int:
    async with db.connect() as connection:
        count = await connection.scalar(select(func.count()).select_from(outbox))
    return int(count or 0)


async def test_the_broker_holds_one_window_and_the_rest_waits_queued_in_the_outbox(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    await record(db, scheduler_settings, FLOOD, 30)
    flood = await outbox_order(db)
    relay = make_relay(db, broker, window=10)
    assert await relay.pass_once() == 10
    assert await relay.pass_once() == 0  # the window is full: nothing more goes
    assert await waiting_in_outbox(db) == 20
    async with db.connect() as connection:
        statuses = (await connection.execute(select(jobs.c.status).distinct())).scalars().all()
    assert statuses == ["queued"]
    first = await drain(broker, topology.READY_MEDIUM, most=4)  # workers take four
    assert set(first) < set(flood[:10])  # (a pass's publishes overtake each other)
    assert await relay.pass_once() == 4  # ... and the window takes four more
    rest = await drain(broker, topology.READY_MEDIUM)
    assert set(rest) == set(flood[:14]) - set(first)  # the oldest ones next


async def test_a_single_job_of_another_project_goes_in_the_first_round_after_a_flood(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    await record(db, scheduler_settings, FLOOD, 40)
    flood = await outbox_order(db)
    relay = make_relay(db, broker, window=10)
    assert await relay.pass_once() == 10
    (single,) = await record(db, scheduler_settings, SINGLE, 1)
    await drain(broker, topology.READY_MEDIUM, most=3)
    assert await relay.pass_once() == 3
    sent = await drain(broker, topology.READY_MEDIUM)
    # Behind the window already in the broker, and first of what went next with the
    # flood's oldest waiting one.
    assert set(sent[7:]) == {flood[10], single.job_id, flood[11]}


async def test_room_for_one_at_a_time_still_reaches_the_single_job_in_its_round(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    """Workers take one message at a time: each pass has room for one. The flood's oldest
    waiting job and the single one share the first round; the next pass sends the single
    one, not the flood's next (whose earlier rounds were served)."""
    await record(db, scheduler_settings, FLOOD, 40)
    relay = make_relay(db, broker, window=10)
    assert await relay.pass_once() == 10
    (single,) = await record(db, scheduler_settings, SINGLE, 1)
    for _ in range(2):
        await drain(broker, topology.READY_MEDIUM, most=1)
        assert await relay.pass_once() == 1
    sent = await drain(broker, topology.READY_MEDIUM)
    assert single.job_id in sent[-2:]


async def test_a_job_written_between_two_reads_of_the_fair_order_joins_its_first_round(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    """The fair order is read at most once a second; a project's first dispatch written
    meanwhile goes with the next pass all the same."""
    await record(db, scheduler_settings, FLOOD, 40)
    relay = make_relay(db, broker, window=10)
    assert await relay.pass_once() == 10
    await drain(broker, topology.READY_MEDIUM, most=3)
    assert await relay.pass_once() == 3  # the fair order read
    (single,) = await record(db, scheduler_settings, SINGLE, 1)
    await drain(broker, topology.READY_MEDIUM, most=3)
    assert await relay.pass_once() == 3  # within the second: not read again
    sent = await drain(broker, topology.READY_MEDIUM)
    assert single.job_id in sent[-3:]


async def test_a_backlog_larger_than_a_pass_is_taken_in_fair_order(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    """No window in the way, but more rows than a pass takes: after the first full pass, a
    pass takes each project's rows in turn instead of the oldest."""
    await record(db, scheduler_settings, FLOOD, 50)
    (single,) = await record(db, scheduler_settings, SINGLE, 1)
    relay = make_relay(db, broker, window=1_000, limit=10)
    assert await relay.pass_once() == 10  # the oldest ten: a backlog is seen
    assert await relay.pass_once() == 10
    sent = await drain(broker, topology.READY_MEDIUM)
    assert single.job_id in sent[10:]  # in the second pass, not behind the whole flood


async def test_a_weighted_project_gets_its_weight_in_dispatches_each_round(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    async with db.begin() as connection:
        await connection.execute(
            insert(project_flow).values(project_id=FLOOD, weight=3, updated_by="t")
        )
    heavy = {job.job_id for job in await record(db, scheduler_settings, FLOOD, 20)}
    light = {job.job_id for job in await record(db, scheduler_settings, SINGLE, 20)}
    relay = make_relay(db, broker, window=8)
    assert await relay.pass_once() == 8
    sent = await drain(broker, topology.READY_MEDIUM)
    assert (len(heavy.intersection(sent)), len(light.intersection(sent))) == (6, 2)
    backlog = make_relay(db, broker, window=1_000, limit=4)
    assert await backlog.pass_once() == 4  # the oldest four (of the heavy project)
    assert await backlog.pass_once() == 4  # then in rounds in SQL: three to one
    sent = await drain(broker, topology.READY_MEDIUM)
    assert (len(heavy.intersection(sent[4:])), len(light.intersection(sent[4:]))) == (3, 1)


async def test_a_full_ready_queue_does_not_hold_back_the_dispatches_of_another(
    db: AsyncEngine, broker: RabbitBus, scheduler_settings: Settings
) -> None:
    await record(db, scheduler_settings, FLOOD, 60)
    urgent = await record(db, scheduler_settings, SINGLE, 3, priority=3)
    relay = make_relay(db, broker, window=5, limit=20)
    assert await relay.pass_once() == 5  # the oldest twenty locked, five fit
    assert await relay.pass_once() == 3  # the medium queue is full: its rows are left out
    high = await drain(broker, topology.READY_HIGH)
    assert sorted(high) == sorted(job.job_id for job in urgent)
