"""Publishing many messages on one channel in one go, their confirms in flight together.

aio-pika's ``Exchange.publish`` costs 110-140 us of CPU per message here, most of it aiormq's
machinery around each publish: the channel's lock taken and given back, a timeout scope, a
write-queue item and a drain future, each a wake-up of the event loop. A relay pass publishes
hundreds of messages at once; here they take the channel's lock once, take consecutive
delivery tags, register one confirmation per message exactly as aiormq's own
``basic_publish`` does (so its handling of acks, nacks, returns and a closing channel settles
them unchanged), and reach the connection's writer as one item: 28-33 us per message
(``docs/performance.md``, fourteenth session).

It reaches into aiormq's channel (``lock``, ``delivery_tag``, ``confirmations``,
``message_id_delivery_tag``, ``write_queue``, ``_split_body``), whose version
``constraints.txt`` pins; ``tests/integration/test_amqp_batch.py`` publishes through it
against the real broker (confirmed, returned, refused, a closed channel, beside aio-pika's own
publishes on the same channel).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any, cast

import aio_pika
import aiormq
from aio_pika.abc import AbstractExchange
from aiormq.abc import ChannelFrame
from aiormq.exceptions import ChannelInvalidStateError, PublishError
from pamqp import commands as spec
from pamqp.header import ContentHeader

MAX_ROUTING_KEY_BYTES = 255  # AMQP's shortstr


class NotSent(Exception):
    """The message never left this process: the broker certainly does not hold it."""


async def publish_batch(
    exchange: AbstractExchange, items: Sequence[tuple[str, aio_pika.Message]]
) -> list[BaseException | None]:
    """Publish each ``(routing_key, message)`` on ``exchange`` (mandatory, confirmed); one
    outcome per item, in order: None once the broker confirmed it, :class:`NotSent` when it
    was never sent, else the error (a return or nack: ``aiormq``'s ``DeliveryError``; the
    channel closed before the confirm: the message may be in a queue)."""
    if not items:
        return []
    outcomes: list[BaseException | None] = [None] * len(items)
    sendable = []
    for index, (routing_key, _) in enumerate(items):
        if len(routing_key.encode()) > MAX_ROUTING_KEY_BYTES:
            outcomes[index] = NotSent(f"routing key longer than {MAX_ROUTING_KEY_BYTES} bytes")
        else:
            sendable.append(index)
    owner = getattr(exchange, "channel", None)
    if owner is None or owner.is_closed:
        return [NotSent(f"{owner!r} is closed")] * len(items)
    if not sendable:
        return outcomes
    channel = cast(aiormq.Channel, await owner.get_underlay_channel())
    try:
        confirmations = await _send(channel, exchange.name, [items[i] for i in sendable])
    except (ChannelInvalidStateError, aiormq.exceptions.ChannelClosed) as exc:
        return [NotSent(repr(exc))] * len(items)
    results = await asyncio.gather(*confirmations, return_exceptions=True)
    for index, result in zip(sendable, results, strict=True):
        outcomes[index] = _outcome(result)
    return outcomes


def _outcome(result: Any) -> BaseException | None:
    if isinstance(result, BaseException):
        return result
    if isinstance(result, spec.Basic.Ack):
        return None
    # A channel opened without on_return_raises resolves a returned message with it.
    return PublishError(result, result.delivery)


async def _send(
    channel: aiormq.Channel, exchange: str, items: Sequence[tuple[str, aio_pika.Message]]
) -> list[asyncio.Future[Any]]:
    """Hand every item's frames to the connection's writer as one item, each with its own
    confirmation (as ``aiormq.Channel.basic_publish`` registers it); returns those."""
    if not channel.publisher_confirms:
        raise ValueError("publish_batch needs a channel with publisher confirms")
    if channel.is_closed:
        raise ChannelInvalidStateError(f"{channel!r} is closed")
    async with channel.lock:
        first_tag = channel.delivery_tag + 1
        frames: list[Any] = []
        confirmations: list[asyncio.Future[Any]] = []
        for routing_key, message in items:
            properties = message.properties
            if not properties.message_id:
                properties.message_id = uuid.uuid4().hex
            channel.delivery_tag += 1
            tag = channel.delivery_tag
            confirmation = channel.create_future()
            channel.confirmations[tag] = confirmation
            channel.message_id_delivery_tag[properties.message_id] = tag
            confirmation.add_done_callback(_forget(channel, properties.message_id, tag))
            confirmations.append(confirmation)
            frames.append(
                spec.Basic.Publish(exchange=exchange, routing_key=routing_key, mandatory=True)
            )
            frames.append(ContentHeader(properties=properties, body_size=len(message.body)))
            frames.extend(channel._split_body(message.body))
        drain = channel.create_future()
        try:
            await channel.write_queue.put(
                ChannelFrame.marshall(
                    frames=frames, channel_number=channel.number, drain_future=drain
                )
            )
        except BaseException:
            # Nothing reached the writer: the tags are free again, as basic_publish leaves them.
            for tag, confirmation in enumerate(confirmations, start=first_tag):
                channel.confirmations.pop(tag, None)
                confirmation.cancel()
            channel.delivery_tag = first_tag - 1
            drain.cancel()
            raise
        await drain
    return confirmations


def _forget(channel: aiormq.Channel, message_id: str, tag: int) -> Any:
    def forget(_: asyncio.Future[Any]) -> None:
        if channel.message_id_delivery_tag.get(message_id) == tag:
            channel.message_id_delivery_tag.pop(message_id)

    return forget
