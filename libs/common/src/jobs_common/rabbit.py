"""RabbitMQ plumbing shared by every service: one connection, confirmed publishing, consuming.

Publishing always uses publisher confirms, ``mandatory=True`` and ``on_return_raises=True``:
an unroutable message raises instead of being confirmed as if delivered. Many publishes can be
in flight at once (:meth:`Publisher.publish_many`, handed to the connection in one go); each
item reports its own outcome so an outbox marks exactly the confirmed ones as sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import cast

import aio_pika
import aiormq
from aio_pika.abc import (
    AbstractChannel,
    AbstractExchange,
    AbstractIncomingMessage,
    AbstractQueue,
    AbstractRobustConnection,
)
from yarl import URL

from jobs_common.acks import AckPolicy, DeadLetterHook, Outcome, Settler
from jobs_common.amqp_batch import publish_batch
from jobs_common.amqp_transport import CoalescingRobustConnection, connect_coalescing
from jobs_common.contracts import Message
from jobs_common.errors import PoisonMessage
from jobs_common.topology import JOBS_EXCHANGE, Topology, declare_topology

log = logging.getLogger(__name__)


def robust_connection(url: str, *, name: str) -> AbstractRobustConnection:
    """The robust connection :func:`connect` opens, not connected yet: for a caller that
    must hold it during its first attempt (to close it if the attempt is abandoned)."""
    properties = {"connection_name": name}
    if url.startswith("amqps://"):
        return aio_pika.RobustConnection(URL(url), client_properties=properties)
    return CoalescingRobustConnection(URL(url), client_properties=properties)


async def connect(url: str, *, name: str) -> AbstractRobustConnection:
    """A robust connection; on ``amqp://`` the frames written within half a millisecond are
    sent together (:mod:`jobs_common.amqp_transport`)."""
    if url.startswith("amqps://"):
        return await aio_pika.connect_robust(url, client_properties={"connection_name": name})
    return await connect_coalescing(url, name=name)


async def open_channel(
    connection: AbstractRobustConnection, *, prefetch: int | None = None
) -> AbstractChannel:
    channel = await connection.channel(publisher_confirms=True, on_return_raises=True)
    if prefetch is not None:
        await channel.set_qos(prefetch_count=prefetch)
    return channel


def amqp_message(message: Message, *, body: bytes | None = None) -> aio_pika.Message:
    return aio_pika.Message(
        body=body if body is not None else message.to_json(),
        content_type="application/json",
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        message_id=str(message.message_id),
        correlation_id=message.trace_id,
        type=getattr(message, "type", None),
        headers={"trace_id": message.trace_id, "v": message.v},
    )


@dataclass(frozen=True)
class Outgoing:
    """One message to publish: routing key plus the ready AMQP message."""

    routing_key: str
    message: aio_pika.Message


class Publisher:
    """Confirmed, mandatory publishing on ``jobs.exchange`` (or another exchange)."""

    def __init__(self, exchange: AbstractExchange) -> None:
        self.exchange = exchange

    @property
    def channel_open(self) -> bool:
        """Whether a publish now would reach the broker (else it fails before it is sent)."""
        # aio-pika's exchanges keep their channel; its abstract type does not declare it.
        channel: AbstractChannel | None = getattr(self.exchange, "channel", None)
        return channel is not None and not channel.is_closed

    async def publish(self, routing_key: str, message: Message) -> None:
        await self.exchange.publish(amqp_message(message), routing_key, mandatory=True)

    async def publish_raw(self, item: Outgoing) -> None:
        await self.exchange.publish(item.message, item.routing_key, mandatory=True)

    async def publish_many(self, items: Sequence[Outgoing]) -> list[BaseException | None]:
        """Publish all items in one go, their confirms in flight together
        (:mod:`jobs_common.amqp_batch`); one outcome per item (``NotSent``: the broker
        certainly does not hold it)."""
        return await publish_batch(
            self.exchange, [(item.routing_key, item.message) for item in items]
        )


@dataclass
class RabbitBus:
    """A process's long-lived connection, publishing channel and declared topology."""

    connection: AbstractRobustConnection
    channel: AbstractChannel
    topology: Topology
    publisher: Publisher

    @classmethod
    async def open(cls, url: str, *, name: str) -> RabbitBus:
        connection = await connect(url, name=name)
        channel = await open_channel(connection)
        topology = await declare_topology(channel)
        return cls(connection, channel, topology, Publisher(topology.jobs))

    @property
    def channel_broken(self) -> bool:
        """Connected, yet the publishing channel is closed: a part of this process that a
        restart mends (while the connection itself is away, the broker is, and the robust
        connection restores the channel when it comes back)."""
        return self.connection.connected.is_set() and self.channel.is_closed

    async def close(self) -> None:
        await self.connection.close()

    async def exchange(self, name: str = JOBS_EXCHANGE) -> AbstractExchange:
        return await self.channel.get_exchange(name)


async def has_consumers(queue: AbstractQueue, *, timeout: float = 2.0) -> bool:
    """Whether the broker counts a consumer on ``queue``.

    A robust connection may come back without a consumer that silently stayed gone; /ready
    asks the broker (re-declaring the queue with its own arguments reports the count).
    """
    try:
        declared = await asyncio.wait_for(queue.declare(), timeout=timeout)
    except Exception:
        return False
    return (declared.consumer_count or 0) > 0


async def consumes(queue: AbstractQueue, tag: str | None, *, timeout: float = 2.0) -> bool:
    """Whether this process consumes ``queue`` with ``tag``: the tag is on the queue's
    channel, and the channel answers (a passive declare).

    The broker's consumer count alone would not do on a shared queue: it counts the
    consumers of every process, and another replica's keeps it above zero while this one's
    is gone (after a broker restart the robust connection sometimes brings a channel back
    without its consumer).
    """
    if tag is None or queue.channel.is_closed:
        return False
    try:
        underlay = await asyncio.wait_for(queue.channel.get_underlay_channel(), timeout)
    except Exception:
        return False
    # aiormq's channel keeps the tags it consumes with (aio-pika reads them the same way).
    if tag not in cast(aiormq.Channel, underlay).consumers:
        return False
    return await has_consumers(queue, timeout=timeout)


BatchHandler = Callable[[Sequence[AbstractIncomingMessage]], Awaitable[None]]


class BatchConsumer:
    """Consume one queue in batches, settled by the one ack policy (:mod:`jobs_common.acks`).

    Deliveries are gathered for up to ``max_wait`` seconds or ``max_batch`` messages and
    handed to ``handler`` together (one database transaction for many messages). When the
    handler returns, every message of the batch is acked: the effect is durable by then.
    When it raises, the batch is retried one message at a time so one bad message cannot
    block the others; a single message that raises :class:`PoisonMessage` goes to the dead
    path, any other error requeues it after a growing pause, at most ``policy.max_requeues``
    times, then sends it to the dead path (``dead_letter`` records it there first when the
    queue has no dead-letter exchange). The pause holds this consumer back: during an outage
    it fails one message per pause instead of spinning.
    """

    def __init__(
        self,
        queue: AbstractQueue,
        handler: BatchHandler,
        *,
        max_batch: int = 200,
        max_wait: float = 0.02,
        max_bytes: int | None = None,
        policy: AckPolicy | None = None,
        requeue_counts_capacity: int = 10_000,
        dead_letter: DeadLetterHook | None = None,
        own_channel: bool = False,
    ) -> None:
        self.queue = queue
        self.own_channel = own_channel  # no other consumer on the channel: ack batches at once
        self.handler = handler
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.max_bytes = max_bytes  # a batch ends once its bodies reach this many bytes
        self.settler = Settler(
            policy or AckPolicy(), capacity=requeue_counts_capacity, dead_letter=dead_letter
        )
        self._inbox: asyncio.Queue[AbstractIncomingMessage] = asyncio.Queue()
        self._consumer_tag: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    @property
    def started(self) -> bool:
        """Started and not stopped (its consumer may still be gone: see :attr:`active`)."""
        return self._task is not None and not self._task.done()

    @property
    def stopped(self) -> bool:
        """Stopped on purpose (shutting down): not to be mended."""
        return self._stopped

    @property
    def active(self) -> bool:
        return self._consumer_tag is not None and self.started

    async def ready(self) -> bool:
        """Consuming here, on a channel that answers."""
        return self.active and await consumes(self.queue, self._consumer_tag)

    async def start(self) -> None:
        self._stopped = False
        self._start_task()
        self._consumer_tag = await self.queue.consume(self._inbox.put)

    def _start_task(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"consume:{self.queue.name}")

    async def consume_on(self, channel: AbstractChannel) -> None:
        """Consume again on a fresh ``channel``: the one the robust connection did not bring
        back with its consumer (seen after a broker restart) is closed first, which also
        keeps aio-pika from restoring it beside the new one. Deliveries of the old channel
        still in hand are requeued by the broker and come again here (handlers are
        idempotent: every delivery may come twice)."""
        old = self.queue
        self._consumer_tag = None
        try:
            await asyncio.wait_for(old.channel.close(), 5)
        except Exception:
            log.debug("old channel not closed", extra={"queue": old.name}, exc_info=True)
        self.queue = await channel.get_queue(old.name)
        if not self.started:  # its task ended (it must not; mended all the same)
            self._start_task()
        self._consumer_tag = await self.queue.consume(self._inbox.put)

    async def stop(self) -> None:
        self._stopped = True
        if self._consumer_tag is not None:
            try:
                await self.queue.cancel(self._consumer_tag)
            except Exception:  # the channel may already be gone at shutdown
                log.debug("cancel failed", extra={"queue": self.queue.name}, exc_info=True)
            self._consumer_tag = None
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _next_batch(self) -> list[AbstractIncomingMessage]:
        batch = [await self._inbox.get()]
        deadline = asyncio.get_running_loop().time() + self.max_wait
        room = None if self.max_bytes is None else self.max_bytes - len(batch[0].body)
        while len(batch) < self.max_batch and (room is None or room > 0):
            if not self._inbox.empty():
                message = self._inbox.get_nowait()
            else:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                try:
                    message = await asyncio.wait_for(self._inbox.get(), remaining)
                except TimeoutError:
                    break
            batch.append(message)
            if room is not None:
                room -= len(message.body)
        return batch

    async def _run(self) -> None:
        while True:
            batch = await self._next_batch()
            try:
                await self._handle(batch)
            except Exception:  # one batch never ends the consumer
                log.exception(
                    "batch not settled; requeued",
                    extra={"action": "batch_unsettled", "queue": self.queue.name},
                )
                await self.settler.requeue_all(batch, queue=self.queue.name)

    async def _handle(self, batch: list[AbstractIncomingMessage]) -> None:
        queue = self.queue.name
        try:
            await self.handler(batch)
        except Exception as exc:
            if len(batch) == 1:
                await self._settle_failed(batch[0], exc)
                return
            log.warning(
                "batch failed; retrying one by one",
                extra={"action": "batch_split", "queue": queue, "size": len(batch)},
                exc_info=True,
            )
            for message in batch:
                try:
                    await self.handler([message])
                except Exception as exc:
                    await self._settle_failed(message, exc)
                else:
                    await self.settler.ack_all([message], queue=queue)
            return
        await self.settler.ack_all(batch, queue=queue, multiple=self.own_channel)

    async def _settle_failed(self, message: AbstractIncomingMessage, exc: Exception) -> None:
        if isinstance(exc, PoisonMessage):
            outcome, reason = Outcome.POISON, exc.message
        else:
            outcome, reason = Outcome.TRANSIENT, f"{type(exc).__name__}: {exc}"
        await self.settler.settle(
            message, outcome, queue=self.queue.name, reason=reason[:1000], error=exc
        )
