"""The ack policy against a real broker: a BatchConsumer never requeues a message forever."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aio_pika
import pytest
from aio_pika.abc import (
    AbstractChannel,
    AbstractIncomingMessage,
    AbstractQueue,
    AbstractRobustConnection,
)
from prometheus_client import REGISTRY

from jobs_common.acks import AckPolicy, Action, Outcome, Settler
from jobs_common.errors import PoisonMessage
from jobs_common.rabbit import BatchConsumer, connect, consumes, open_channel
from jobs_testing.waiting import eventually

pytestmark = pytest.mark.integration

FAST = AckPolicy(max_requeues=3, pause=0.01, max_pause=0.04)


def settled(queue: str, action: str) -> float:
    value = REGISTRY.get_sample_value(
        "jobs_deliveries_settled_total", {"queue": queue, "action": action}
    )
    return value or 0.0


@pytest.fixture
async def connection(rabbit_url: str) -> AsyncIterator[AbstractRobustConnection]:
    connection = await connect(rabbit_url, name="ack-policy-test")
    yield connection
    await connection.close()


async def work_queue(
    channel: AbstractChannel, *, dead_lettered: bool
) -> tuple[AbstractQueue, AbstractQueue | None]:
    """A queue of this test's own that dead-letters (like jobs.ready.*) to a bound queue, or
    has no dead-letter exchange (like the scheduler's queues)."""
    name = f"acks.{uuid.uuid4().hex[:8]}"
    if not dead_lettered:
        return await channel.declare_queue(name), None
    dlx = await channel.declare_exchange(f"{name}.dlx", aio_pika.ExchangeType.DIRECT)
    dead = await channel.declare_queue(f"{name}.dead")
    await dead.bind(dlx, routing_key=dead.name)
    arguments: dict[str, Any] = {
        "x-dead-letter-exchange": dlx.name,
        "x-dead-letter-routing-key": dead.name,
    }
    return await channel.declare_queue(name, arguments=arguments), dead


async def publish(channel: AbstractChannel, queue: str, *bodies: bytes) -> None:
    for body in bodies:
        message = aio_pika.Message(body, message_id=f"{body[:40].decode()}-{uuid.uuid4().hex[:6]}")
        await channel.default_exchange.publish(message, routing_key=queue)


async def depth(connection: AbstractRobustConnection, queue: str) -> int:
    """Ready messages in ``queue``, asked on a channel of its own."""
    channel = await connection.channel()
    try:
        declared = await (await channel.get_queue(queue)).declare()
        return declared.message_count or 0
    finally:
        await channel.close()


def first_death(letter: AbstractIncomingMessage) -> dict[str, Any]:
    """The newest ``x-death`` entry RabbitMQ added when it dead-lettered ``letter``."""
    deaths = (letter.headers or {}).get("x-death")
    assert isinstance(deaths, list) and isinstance(deaths[0], dict)
    return deaths[0]


class Recorder:
    """A batch handler that raises ``error`` whenever its batch holds ``b"bad"``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.deliveries: dict[int, tuple[bytes, bool]] = {}  # delivery tag -> (body, redelivered)
        self.handled: list[bytes] = []

    async def __call__(self, batch: Sequence[AbstractIncomingMessage]) -> None:
        for message in batch:
            assert message.delivery_tag is not None
            self.deliveries[message.delivery_tag] = (message.body, bool(message.redelivered))
        if any(message.body == b"bad" for message in batch):
            raise self.error
        self.handled.extend(message.body for message in batch)

    def redelivered(self, body: bytes) -> list[bool]:
        """The ``redelivered`` flag of each delivery of ``body``, in delivery order."""
        return [r for _, (b, r) in sorted(self.deliveries.items()) if b == body]


async def run_until_dead_lettered(
    connection: AbstractRobustConnection, handler: Recorder
) -> tuple[AbstractQueue, AbstractIncomingMessage]:
    """Publish good-1, bad, good-2 (one batch), consume them until ``bad`` reaches the dead
    queue, stop the consumer and close its channel (anything unacked would go back then)."""
    channel = await open_channel(connection, prefetch=50)
    queue, dead = await work_queue(channel, dead_lettered=True)
    assert dead is not None
    await publish(channel, queue.name, b"good-1", b"bad", b"good-2")
    consumer = BatchConsumer(queue, handler, max_batch=10, max_wait=0.2, policy=FAST)
    await consumer.start()
    try:
        async with asyncio.timeout(20), dead.iterator() as letters:
            letter = await anext(letters)
            await letter.ack()
    finally:
        await consumer.stop()
        await channel.close()
    return queue, letter


async def test_an_always_failing_message_is_requeued_max_requeues_times_then_dead_lettered(
    connection: AbstractRobustConnection,
) -> None:
    handler = Recorder(RuntimeError("always fails, never poison"))
    queue, letter = await run_until_dead_lettered(connection, handler)

    assert letter.body == b"bad"
    death = first_death(letter)
    assert (death["reason"], death["queue"]) == ("rejected", queue.name)
    # Delivered once, then redelivered exactly max_requeues (3) times.
    assert handler.redelivered(b"bad") == [False, True, True, True]
    # The other messages of its batch were delivered once and acked.
    assert handler.redelivered(b"good-1") == [False]
    assert handler.redelivered(b"good-2") == [False]
    assert sorted(handler.handled) == [b"good-1", b"good-2"]
    assert await depth(connection, queue.name) == 0
    assert settled(queue.name, "requeue") == 3
    assert settled(queue.name, "requeue_limit") == 1
    assert settled(queue.name, "ack") == 2


async def test_a_poison_message_goes_to_the_dead_path_at_once(
    connection: AbstractRobustConnection,
) -> None:
    handler = Recorder(PoisonMessage("cannot parse"))
    queue, letter = await run_until_dead_lettered(connection, handler)

    assert letter.body == b"bad"
    assert handler.redelivered(b"bad") == [False]
    assert sorted(handler.handled) == [b"good-1", b"good-2"]
    assert await depth(connection, queue.name) == 0
    assert (settled(queue.name, "poison"), settled(queue.name, "requeue")) == (1, 0)


async def test_without_a_dead_letter_exchange_the_hook_records_it_and_a_failed_hook_requeues(
    connection: AbstractRobustConnection,
) -> None:
    channel = await open_channel(connection, prefetch=10)
    queue, _ = await work_queue(channel, dead_lettered=False)
    recorded: list[tuple[bytes, str]] = []
    attempts = 0
    done = asyncio.Event()

    async def dead_letter(message: AbstractIncomingMessage, reason: str) -> None:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionError("database down")
        recorded.append((message.body, reason))
        done.set()

    handler = Recorder(RuntimeError("boom"))
    policy = AckPolicy(max_requeues=1, pause=0.01, max_pause=0.01)
    consumer = BatchConsumer(queue, handler, max_wait=0.01, policy=policy, dead_letter=dead_letter)
    await publish(channel, queue.name, b"bad")
    await consumer.start()
    try:
        async with asyncio.timeout(20):
            await done.wait()
        # The rejection follows the hook: wait for the broker to have no unacked delivery.
        await eventually(
            lambda: _settled_twice_and_rejected(queue.name), what="the rejection after the hook"
        )
    finally:
        await consumer.stop()
        await channel.close()

    # 1st failure: requeued; 2nd: at the limit, but the hook failed, so requeued again;
    # 3rd: recorded by the hook, then rejected (dropped: the queue has no dead-letter exchange).
    assert handler.redelivered(b"bad") == [False, True, True]
    assert recorded == [
        (b"bad", "requeue_limit: still failing after 2 requeues: RuntimeError: boom")
    ]
    assert await depth(connection, queue.name) == 0


async def _settled_twice_and_rejected(queue: str) -> bool:
    return settled(queue, "requeue") == 2 and settled(queue, "requeue_limit") == 1


async def test_settling_on_a_closed_channel_logs_and_the_broker_redelivers(
    connection: AbstractRobustConnection,
) -> None:
    channel = await open_channel(connection)
    queue, _ = await work_queue(channel, dead_lettered=False)
    await publish(channel, queue.name, b"one")
    message = await eventually(lambda: queue.get(no_ack=False, fail=False), what="a delivery")
    await channel.close()

    decision = await Settler(FAST).settle(message, Outcome.HANDLED, queue=queue.name)

    assert decision.action is Action.ACK
    assert (settled(queue.name, "settle_failed"), settled(queue.name, "ack")) == (1, 0)
    assert await depth(connection, queue.name) == 1  # back in the queue, not lost


async def test_a_consumer_on_its_own_channel_acks_a_batch_with_one_frame(
    connection: AbstractRobustConnection,
) -> None:
    channel = await open_channel(connection, prefetch=100)
    queue, _ = await work_queue(channel, dead_lettered=False)
    await publish(channel, queue.name, *(f"m{i}".encode() for i in range(20)))
    acks: list[tuple[int | None, bool]] = []
    underlay = await channel.get_underlay_channel()
    real_ack = underlay.basic_ack  # aiormq's: sends one basic.ack frame

    async def counted_ack(delivery_tag: int | None = None, multiple: bool = False) -> None:
        acks.append((delivery_tag, multiple))
        await real_ack(delivery_tag=delivery_tag, multiple=multiple)

    underlay.basic_ack = counted_ack  # type: ignore[method-assign]
    handled: list[bytes] = []
    release = asyncio.Event()

    async def handler(batch: Sequence[AbstractIncomingMessage]) -> None:
        await release.wait()  # let all 20 arrive first
        handled.extend(m.body for m in batch)

    consumer = BatchConsumer(queue, handler, max_batch=50, max_wait=0.5, own_channel=True)
    await consumer.start()
    try:
        await asyncio.sleep(0.3)
        release.set()

        async def all_handled() -> bool:
            return len(handled) == 20

        await eventually(all_handled, what="every message handled")
        await asyncio.sleep(0.1)
    finally:
        await consumer.stop()
        await channel.close()
    assert len(acks) == 1 and acks[0][1] is True  # one frame for the batch
    assert await depth(connection, queue.name) == 0  # all 20 acked: none came back


async def test_a_batch_whose_channel_closed_before_its_ack_comes_again_and_the_consumer_goes_on(
    connection: AbstractRobustConnection,
) -> None:
    """A process paused while a readiness probe's passive declare was on the consumer's channel
    (SIGSTOP, a stalled VM) finds the probe's timeout expired when it resumes: aiormq closes the
    channel, aio-pika reopens it, and the batch in hand can no longer be acked. Its deliveries
    come again on the reopened channel; the consumer itself must go on (it used to end on the
    closed channel, and with it every read of its queue: issue 31, `make test`)."""
    channel = await open_channel(connection, prefetch=100)
    queue, _ = await work_queue(channel, dead_lettered=False)
    await publish(channel, queue.name, b"one", b"two", b"three")
    calls: list[list[tuple[bytes, bool]]] = []
    consumer: BatchConsumer | None = None

    async def handler(batch: Sequence[AbstractIncomingMessage]) -> None:
        calls.append([(m.body, m.redelivered) for m in batch])
        if len(calls) == 1:
            assert consumer is not None
            await asyncio.sleep(0.2)  # all three in this batch
            underlay = await queue.channel.get_underlay_channel()
            # The probe's timeout cancels its declare mid-call: aiormq closes the channel.
            assert not await consumes(queue, consumer._consumer_tag, timeout=0.0001)

            async def closed() -> bool:
                return underlay.is_closed

            await eventually(closed, what="the channel closed under the batch")

    consumer = BatchConsumer(queue, handler, max_batch=10, max_wait=0.3, own_channel=True)
    await consumer.start()
    try:

        async def redelivered_and_handled() -> bool:
            seen = {body for call in calls[1:] for body, again in call if again}
            return seen == {b"one", b"two", b"three"}

        await eventually(redelivered_and_handled, timeout=15, what="the batch handled again")
        assert consumer.started
        await eventually(lambda: _depth_is(connection, queue.name, 0), what="every message acked")
    finally:
        await consumer.stop()
        await channel.close()
    assert sorted(body for body, _ in calls[0]) == [b"one", b"three", b"two"]


async def _depth_is(connection: AbstractRobustConnection, queue: str, expected: int) -> bool:
    return await depth(connection, queue) == expected


async def test_a_batch_ends_once_its_bodies_reach_max_bytes(
    connection: AbstractRobustConnection,
) -> None:
    """The scheduler records submissions a bounded size of messages per transaction
    (``SCHEDULER_INTAKE_BATCH_BYTES``): ten messages of 1,000 bytes waiting, a limit of 2,500
    bytes gives batches of three (the one that reaches the limit ends it), however many
    ``max_batch`` would allow; a large one still joins a batch with room left, and ends it."""
    channel = await open_channel(connection, prefetch=100)
    queue, _ = await work_queue(channel, dead_lettered=False)
    await publish(channel, queue.name, *(b"m" * 1_000 for _ in range(10)), b"M" * 5_000)
    sizes: list[int] = []
    release = asyncio.Event()

    async def handler(batch: Sequence[AbstractIncomingMessage]) -> None:
        await release.wait()  # every message in the consumer's inbox before the next batch
        sizes.append(len(batch))

    consumer = BatchConsumer(queue, handler, max_batch=50, max_wait=0.5, max_bytes=2_500)
    await consumer.start()
    try:
        await asyncio.sleep(0.3)
        release.set()

        async def all_handled() -> bool:
            return sum(sizes) == 11

        await eventually(all_handled, what="every message handled")
    finally:
        await consumer.stop()
        await channel.close()
    assert sizes == [3, 3, 3, 2], sizes  # the last: one of 1,000 bytes, then the 5,000
