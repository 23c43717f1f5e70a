"""Publishing a batch in one go (``jobs_common.amqp_batch``) against the real broker: every
message confirmed and delivered in order with its properties, one item for the connection's
writer, the tags shared with aio-pika's own publishes on the channel, and each failure told
per message (returned, refused by a full queue, never sent)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aio_pika
import aiormq
import pytest
from aio_pika.abc import AbstractChannel, AbstractQueue, AbstractRobustConnection
from aiormq.exceptions import DeliveryError

from jobs_common.amqp_batch import NotSent, publish_batch
from jobs_common.rabbit import Outgoing, Publisher, connect, open_channel

pytestmark = pytest.mark.integration


@pytest.fixture
async def connection(rabbit_url: str) -> AsyncIterator[AbstractRobustConnection]:
    connection = await connect(rabbit_url, name="amqp-batch-test")
    yield connection
    await connection.close()


@pytest.fixture
async def channel(connection: AbstractRobustConnection) -> AbstractChannel:
    return await open_channel(connection)  # confirms, on_return_raises: as every service's


def message(index: int, **headers: Any) -> aio_pika.Message:
    return aio_pika.Message(
        f"body {index}".encode(),
        content_type="application/json",
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        message_id=f"m-{index}",
        correlation_id="trace",
        type="JobDispatch",
        headers={"index": index, **headers},
    )


async def drain(queue: AbstractQueue, count: int) -> list[aio_pika.abc.AbstractIncomingMessage]:
    received = []
    async with queue.iterator() as messages:
        async for incoming in messages:
            received.append(incoming)
            await incoming.ack()
            if len(received) == count:
                break
    return received


async def test_a_batch_is_confirmed_and_delivered_in_order_with_its_properties(
    channel: AbstractChannel,
) -> None:
    queue = await channel.declare_queue("", exclusive=True)
    outcomes = await publish_batch(
        channel.default_exchange, [(queue.name, message(i)) for i in range(300)]
    )
    assert outcomes == [None] * 300
    received = await drain(queue, 300)
    assert [m.body for m in received] == [f"body {i}".encode() for i in range(300)]
    first = received[0]
    assert (first.message_id, first.correlation_id, first.type) == ("m-0", "trace", "JobDispatch")
    assert first.headers == {"index": 0}
    assert first.delivery_mode == aio_pika.DeliveryMode.PERSISTENT
    assert first.content_type == "application/json"


async def test_a_batch_reaches_the_connection_s_writer_as_one_item(
    channel: AbstractChannel, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = await channel.declare_queue("", exclusive=True)
    underlay = await channel.get_underlay_channel()
    assert isinstance(underlay, aiormq.Channel)
    handed: list[object] = []
    put = underlay.write_queue.put

    async def spy(item: Any) -> None:
        handed.append(item)
        await put(item)

    monkeypatch.setattr(underlay.write_queue, "put", spy)
    outcomes = await publish_batch(
        channel.default_exchange, [(queue.name, message(i)) for i in range(100)]
    )
    assert outcomes == [None] * 100
    assert len(handed) == 1  # aio-pika's publish hands over one item per message


async def test_batches_and_single_publishes_share_the_channel_s_delivery_tags(
    channel: AbstractChannel,
) -> None:
    queue = await channel.declare_queue("", exclusive=True)
    exchange = channel.default_exchange
    singles = [exchange.publish(message(1000 + i), queue.name) for i in range(20)]
    results = await asyncio.gather(
        *singles,
        publish_batch(exchange, [(queue.name, message(i)) for i in range(50)]),
        *(exchange.publish(message(2000 + i), queue.name) for i in range(20)),
        publish_batch(exchange, [(queue.name, message(100 + i)) for i in range(50)]),
    )
    batches = [r for r in results if isinstance(r, list)]
    assert batches == [[None] * 50, [None] * 50]
    assert all(isinstance(r, aiormq.spec.Basic.Ack) for r in results if not isinstance(r, list))
    assert len(await drain(queue, 140)) == 140
    underlay = await channel.get_underlay_channel()
    assert isinstance(underlay, aiormq.Channel)
    assert not underlay.confirmations and not underlay.message_id_delivery_tag  # all settled


async def test_an_unroutable_message_is_returned_alone(channel: AbstractChannel) -> None:
    queue = await channel.declare_queue("", exclusive=True)
    nowhere = f"no-such-queue-{uuid.uuid4().hex}"
    outcomes = await publish_batch(
        channel.default_exchange,
        [(queue.name, message(0)), (nowhere, message(1)), (queue.name, message(2))],
    )
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], DeliveryError) and not isinstance(outcomes[1], NotSent)
    assert [m.body for m in await drain(queue, 2)] == [b"body 0", b"body 2"]


async def test_a_full_queue_refuses_the_messages_past_its_length(channel: AbstractChannel) -> None:
    queue = await channel.declare_queue(
        "", exclusive=True, arguments={"x-max-length": 2, "x-overflow": "reject-publish"}
    )
    outcomes = await publish_batch(
        channel.default_exchange, [(queue.name, message(i)) for i in range(4)]
    )
    assert outcomes[:2] == [None, None]
    assert all(isinstance(o, DeliveryError) for o in outcomes[2:])  # nacked


async def test_nothing_is_sent_on_a_closed_channel(
    connection: AbstractRobustConnection, channel: AbstractChannel
) -> None:
    queue_name = f"amqp-batch-{uuid.uuid4().hex}"
    other = await connection.channel()
    queue = await other.declare_queue(queue_name, auto_delete=True)
    exchange = channel.default_exchange
    await channel.close()
    outcomes = await publish_batch(exchange, [(queue_name, message(i)) for i in range(3)])
    assert all(isinstance(o, NotSent) for o in outcomes)
    declared = await queue.declare()
    assert declared.message_count == 0


async def test_a_routing_key_amqp_cannot_carry_is_not_sent_and_the_rest_are(
    channel: AbstractChannel,
) -> None:
    queue = await channel.declare_queue("", exclusive=True)
    outcomes = await publish_batch(
        channel.default_exchange,
        [(queue.name, message(0)), ("k" * 256, message(1)), (queue.name, message(2))],
    )
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], NotSent)
    assert len(await drain(queue, 2)) == 2


async def test_the_publisher_s_publish_many_goes_through_the_batch(
    channel: AbstractChannel, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = await channel.declare_queue("", exclusive=True)
    calls: list[int] = []

    async def counted(exchange: Any, items: Any) -> list[BaseException | None]:
        calls.append(len(items))
        return await publish_batch(exchange, items)

    monkeypatch.setattr("jobs_common.rabbit.publish_batch", counted)
    publisher = Publisher(channel.default_exchange)
    outcomes = await publisher.publish_many([Outgoing(queue.name, message(i)) for i in range(10)])
    assert outcomes == [None] * 10 and calls == [10]
