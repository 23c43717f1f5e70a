"""The replica's live-events consumer: ``jobs.events`` (``job.changes``, ``job.logs``) -> hub.

Each gateway replica declares its own queue: exclusive and auto-delete (it lives as long as the
replica's connection), bounded (``x-max-length``, ``x-overflow: drop-head``: a stalled gateway
drops its oldest events instead of filling the broker) and consumed with ``no_ack`` (live events
are best effort; the database stays the record).

The name is chosen here, unique per replica (``jobs.live.gateway.<hex>``), not by the server: a
robust connection re-declares its queues, bindings and consumers by name after a reconnect
(aio-pika names a nameless robust queue itself for the same reason), and a readable name shows
whose queue it is in the management UI.

The queue is bound only to the routing keys someone connected here wants (``job.changes``
while a WebSocket is open, ``job.logs`` while a job's lines are followed): :meth:`listen`
binds a key before the connection is told it is live (its ``hello``, a ``subscribed``), and
:meth:`idle` unbinds it ``unbind_after`` seconds after the last listener went, if no one came
back meanwhile. Unbound, the broker drops those events at the exchange instead of queueing
and delivering each to a replica that would discard it: with no browser open, every status
change and log line of every job.

The broker being down never stops the gateway: the first connection is retried in the
background with a growing pause, and once connected the robust connection reconnects by itself
(``reconnect_interval`` in the URL's query tunes its pause). ``gateway_live_events_connected``
says whether events flow.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Coroutine
from typing import Any, Final, Protocol

import aio_pika
from aio_pika.abc import (
    AbstractIncomingMessage,
    AbstractRobustConnection,
    AbstractRobustExchange,
    AbstractRobustQueue,
)
from pydantic import ValidationError

from jobs_common.contracts import JobChanges, JobLogTail, parse_message
from jobs_common.rabbit import robust_connection
from jobs_common.topology import EVENTS_EXCHANGE, JOB_CHANGES, JOB_LOGS_LIVE
from jobs_gateway.adapters.metrics import (
    LIVE_EVENTS_BOUND,
    LIVE_EVENTS_CONNECTED,
    LIVE_EVENTS_RECEIVED,
)

log = logging.getLogger(__name__)

LIVE_QUEUE_PREFIX: Final = "jobs.live.gateway."
LIVE_ROUTING_KEYS: Final = (JOB_CHANGES, JOB_LOGS_LIVE)
CONNECTION_NAME: Final = "jobs-gateway-live"
FIRST_RETRY_SECONDS: Final = 0.5
MAX_RETRY_SECONDS: Final = 15.0
CONNECT_TIMEOUT_SECONDS: Final = 10.0
UNCONNECTED_CLOSE_WAIT_SECONDS: Final = 0.2


class LiveSink(Protocol):
    """Where parsed live events go (the hub)."""

    def publish_changes(self, message: JobChanges) -> int: ...

    def publish_logs(self, message: JobLogTail) -> int: ...

    def wants(self, routing_key: str) -> bool: ...


def live_queue_arguments(max_length: int) -> dict[str, Any]:
    return {"x-max-length": max_length, "x-overflow": "drop-head"}


class LiveEventsConsumer:
    def __init__(
        self, *, url: str, sink: LiveSink, max_length: int, unbind_after: float = 30.0
    ) -> None:
        self.url = url
        self.sink = sink
        self.max_length = max_length
        self.unbind_after = unbind_after
        self.queue_name = LIVE_QUEUE_PREFIX + uuid.uuid4().hex
        self.connection: AbstractRobustConnection | None = None
        self._queue: AbstractRobustQueue | None = None
        self._exchange: AbstractRobustExchange | None = None
        self._bound: set[str] = set()
        self._binding = asyncio.Lock()
        self._unbinds: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._consuming = False
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        """Connected to the broker with the queue consumed (events flow)."""
        return (
            self._consuming and self.connection is not None and self.connection.connected.is_set()
        )

    @property
    def alive(self) -> bool:
        """Connecting (the broker may be away) or consuming; False once the task that
        connects ended without consuming (it failed for good: liveness)."""
        task = self._task
        return self._stopping or task is None or not task.done() or self._consuming

    def start(self) -> None:
        """Connect in the background; never waits for the broker."""
        LIVE_EVENTS_CONNECTED.set(0)
        self._task = asyncio.create_task(self._run(), name="live-events-consumer")

    async def stop(self) -> None:
        self._stopping = True
        task, self._task = self._task, None
        while task is not None and not task.done():
            task.cancel()  # again if a cancel was lost (see _run)
            await asyncio.wait({task}, timeout=1.0)
        if task is not None and not task.cancelled() and task.exception() is not None:
            log.debug("live events task failed", exc_info=task.exception())
        for timer in self._unbinds.values():
            timer.cancel()
        self._unbinds.clear()
        for pending in tuple(self._tasks):
            pending.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._discard_connection()
        self._set_connected(False)
        self._queue = self._exchange = None
        self._bound.clear()
        for routing_key in LIVE_ROUTING_KEYS:
            LIVE_EVENTS_BOUND.labels(routing_key).set(0)

    async def _run(self) -> None:
        delay = FIRST_RETRY_SECONDS
        # The flag, not only the cancellation, ends the loop: on Python 3.11 a cancel that
        # arrives as a connection attempt fails can be lost inside the client's wait_for.
        while not self._stopping:
            try:
                await self._open()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._discard_connection()
                if self._stopping:
                    return
                log.warning(
                    "live events: broker unavailable, retrying",
                    extra={
                        "action": "live_events_connect_failed",
                        "error": repr(exc),
                        "retry_in_seconds": delay,
                    },
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RETRY_SECONDS)

    async def _open(self) -> None:
        # Held before the first attempt, so an attempt that fails or is abandoned is closed.
        connection = self.connection = robust_connection(self.url, name=CONNECTION_NAME)
        await connection.connect(timeout=CONNECT_TIMEOUT_SECONDS)
        channel = await connection.channel()
        # Declared like jobs_common.topology declares it, so the gateway may start first.
        events = await channel.declare_exchange(
            EVENTS_EXCHANGE, aio_pika.ExchangeType.TOPIC, durable=True
        )
        queue = await channel.declare_queue(
            self.queue_name,
            exclusive=True,
            auto_delete=True,
            arguments=live_queue_arguments(self.max_length),
        )
        # A new connection's queue has no bindings (exclusive: the broker deleted the last one).
        self._queue, self._exchange = queue, events
        self._bound.clear()
        await self._bind_wanted()
        await queue.consume(self._on_message, no_ack=True)
        connection.close_callbacks.add(self._on_connection_lost)
        connection.reconnect_callbacks.add(self._on_reconnected)
        self._consuming = True
        self._set_connected(True)
        log.info(
            "live events consumer started",
            extra={"action": "live_events_started", "queue": self.queue_name},
        )

    async def _discard_connection(self) -> None:
        connection = self.connection
        if connection is None:
            return
        try:
            if connection.connected.is_set():
                await connection.close()
            else:
                try:
                    await asyncio.wait_for(connection.close(), UNCONNECTED_CLOSE_WAIT_SECONDS)
                except TimeoutError:
                    # close() cancels the reconnection task and waits for it; a cancel that
                    # lands while an attempt fails is lost (aiormq runs the attempt in a task
                    # of its own) and the task sleeps reconnect_interval first. Giving up the
                    # wait cancels it again, in its sleep; closing again finishes at once.
                    await connection.close()
        except Exception:
            log.debug("live events connection close failed", exc_info=True)
        # Not reached when cancelled half way: the connection stays for stop() to close.
        if self.connection is connection:
            self.connection = None

    def _on_connection_lost(self, _sender: Any, exc: BaseException | None = None) -> None:
        self._set_connected(False)
        if not self._stopping:
            log.warning(
                "live events: broker connection lost, reconnecting",
                extra={"action": "live_events_lost", "queue": self.queue_name, "error": repr(exc)},
            )

    def _on_reconnected(self, _sender: Any) -> None:
        self._set_connected(True)
        # The robust queue restores the bindings it made; a key wanted while the broker was
        # away could not be bound then.
        self._spawn(self._bind_wanted())
        log.info(
            "live events: broker connection back",
            extra={"action": "live_events_reconnected", "queue": self.queue_name},
        )

    async def listen(self, routing_key: str, *, within: float = 2.0) -> None:
        """Have events with ``routing_key`` reach this replica from now on: bound at once if
        they are not. Gives up after ``within`` seconds (the broker slow or away: the key is
        bound once it answers) rather than hold up the connection."""
        timer = self._unbinds.pop(routing_key, None)
        if timer is not None:
            timer.cancel()
        if routing_key in self._bound or self._queue is None:
            return
        try:
            async with asyncio.timeout(within):
                await self._bind(routing_key)
        except Exception as exc:
            log.warning(
                "live events: binding delayed",
                extra={
                    "action": "live_bind_failed",
                    "routing_key": routing_key,
                    "error": repr(exc),
                },
            )

    def idle(self, routing_key: str) -> None:
        """Someone stopped listening to ``routing_key``: unbind it ``unbind_after`` seconds
        later unless someone listens again by then."""
        if routing_key in self._unbinds or self.sink.wants(routing_key):
            return
        loop = asyncio.get_running_loop()
        self._unbinds[routing_key] = loop.call_later(
            self.unbind_after, lambda: self._spawn(self._unbind_if_idle(routing_key))
        )

    async def _bind_wanted(self) -> None:
        for routing_key in LIVE_ROUTING_KEYS:
            if self.sink.wants(routing_key):
                await self._bind(routing_key)

    async def _bind(self, routing_key: str) -> None:
        async with self._binding:
            if routing_key in self._bound or self._queue is None or self._exchange is None:
                return
            await self._queue.bind(self._exchange, routing_key=routing_key)
            self._bound.add(routing_key)
            LIVE_EVENTS_BOUND.labels(routing_key).set(1)

    async def _unbind_if_idle(self, routing_key: str) -> None:
        self._unbinds.pop(routing_key, None)
        async with self._binding:
            if self.sink.wants(routing_key) or routing_key not in self._bound:
                return
            if self._queue is None or self._exchange is None:
                return
            try:
                await self._queue.unbind(self._exchange, routing_key=routing_key)
            except Exception as exc:  # the broker away: events keep coming until it answers
                log.warning(
                    "live events: unbinding failed",
                    extra={"action": "live_unbind_failed", "error": repr(exc)},
                )
                return
            self._bound.discard(routing_key)
            LIVE_EVENTS_BOUND.labels(routing_key).set(0)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _set_connected(self, value: bool) -> None:
        LIVE_EVENTS_CONNECTED.set(1 if value and not self._stopping else 0)

    async def _on_message(self, message: AbstractIncomingMessage) -> None:
        self.handle(message.routing_key or "", message.body)

    def handle(self, routing_key: str, body: bytes) -> None:
        """Parse one event and hand it to the sink; an unparseable one is counted and dropped,
        and so is one no listener wants (not parsed: most of the time no one is connected)."""
        if not self.sink.wants(routing_key):
            LIVE_EVENTS_RECEIVED.labels("unheard").inc()
            return
        try:
            if routing_key == JOB_CHANGES:
                changes = parse_message(JobChanges, body)
                LIVE_EVENTS_RECEIVED.labels(JOB_CHANGES).inc()
                self.sink.publish_changes(changes)
            elif routing_key == JOB_LOGS_LIVE:
                tail = parse_message(JobLogTail, body)
                LIVE_EVENTS_RECEIVED.labels(JOB_LOGS_LIVE).inc()
                self.sink.publish_logs(tail)
            else:
                LIVE_EVENTS_RECEIVED.labels("other").inc()
        except (ValidationError, ValueError) as exc:
            LIVE_EVENTS_RECEIVED.labels("invalid").inc()
            log.warning(
                "unparseable live event dropped",
                extra={
                    "action": "live_event_invalid",
                    "routing_key": routing_key[:100],
                    "error": str(exc)[:1000],
                },
            )
