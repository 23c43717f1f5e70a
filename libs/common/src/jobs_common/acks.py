"""The one acknowledgement policy: how a consumer settles a delivery.

:func:`decide` (pure) turns what happened to a delivery, and how many times this process has
already requeued it, into an action:

=========  ==================  =======================================  ===============
outcome    requeues so far n   action                                   log/metric name
=========  ==================  =======================================  ===============
handled    any                 ``ack``                                  ``ack``
poison     any                 ``reject(requeue=False)``: dead path     ``poison``
transient  n < max_requeues    ``nack(requeue=True)`` after pause(n)    ``requeue``
transient  n >= max_requeues   ``reject(requeue=False)``: dead path     ``requeue_limit``
=========  ==================  =======================================  ===============

``pause(n) = min(max_pause, pause * 2**n)``. The dead path is the queue's dead-letter exchange
(``jobs.ready.*`` -> ``jobs.dlx`` -> ``jobs.dead``); a consumer of a queue without one passes a
``dead_letter`` hook that records the delivery first (the scheduler stores it in
``poison_messages``). If that hook fails, the delivery is requeued after ``max_pause`` instead:
a message is never dropped because its dead path was down.

:class:`Settler` applies decisions to aio-pika deliveries. A closed channel is logged, never
raised: the broker redelivers every unsettled delivery of a closed channel.

Counting requeues: classic queues on RabbitMQ 3.10 carry no delivery count (``x-delivery-count``
is set by quorum queues only, ``redelivered`` is a boolean, ``x-death`` counts dead-letterings),
so each consuming process counts its own requeues in a bounded LRU (:class:`RequeueCounts`)
keyed by message id, or by a hash of the body when there is none. A restart, an eviction from
the LRU or a redelivery to another process starts that count again: the bound holds per
process, so a message is requeued at most ``max_requeues`` times by each consumer process.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from aio_pika.abc import AbstractIncomingMessage
from aiormq.exceptions import ChannelInvalidStateError

from jobs_common.metrics import DELIVERIES_SETTLED

log = logging.getLogger(__name__)


class Outcome(StrEnum):
    """What happened to a delivery."""

    HANDLED = "handled"  # the effect is durable
    POISON = "poison"  # can never be handled (unparseable, unknown version)
    TRANSIENT = "transient"  # failed this time; may work later


class Action(StrEnum):
    """How a delivery is settled with the broker."""

    ACK = "ack"
    REJECT = "reject"  # reject(requeue=False): the queue's dead-letter path
    REQUEUE = "requeue"  # nack(requeue=True)


@dataclass(frozen=True)
class AckPolicy:
    """The bound and the backoff of requeues."""

    max_requeues: int = 10
    pause: float = 1.0
    max_pause: float = 30.0

    def __post_init__(self) -> None:
        if self.max_requeues < 0 or self.pause < 0 or self.max_pause < 0:
            raise ValueError("max_requeues, pause and max_pause must not be negative")


@dataclass(frozen=True)
class Decision:
    action: Action
    name: str  # ack | poison | requeue | requeue_limit: the log's and the metric's action
    pause: float = 0.0  # seconds to wait before a requeue
    multiple: bool = False  # an ack of every delivery up to this one on its channel


def requeue_pause(requeues: int, policy: AckPolicy) -> float:
    """The pause before the requeue that follows ``requeues`` earlier ones (doubling, capped)."""
    return min(policy.max_pause, policy.pause * 2.0 ** min(requeues, 64))


def decide(outcome: Outcome, *, requeues: int, policy: AckPolicy) -> Decision:
    """The action for a delivery with ``outcome`` that this process requeued ``requeues`` times."""
    if outcome is Outcome.HANDLED:
        return Decision(Action.ACK, "ack")
    if outcome is Outcome.POISON:
        return Decision(Action.REJECT, "poison")
    if requeues >= policy.max_requeues:
        return Decision(Action.REJECT, "requeue_limit")
    return Decision(Action.REQUEUE, "requeue", requeue_pause(requeues, policy))


def delivery_key(message_id: str | None, body: bytes) -> str:
    """What identifies a delivery across redeliveries: its message id, else its body's hash."""
    if message_id:
        return f"id:{message_id}"
    return "body:" + hashlib.blake2b(body, digest_size=16).hexdigest()


class RequeueCounts:
    """Requeues per delivery key, at most ``capacity`` keys (least recently requeued go first)."""

    def __init__(self, capacity: int = 10_000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._counts: OrderedDict[str, int] = OrderedDict()

    def __len__(self) -> int:
        return len(self._counts)

    def get(self, key: str) -> int:
        return self._counts.get(key, 0)

    def bump(self, key: str) -> int:
        count = self._counts.pop(key, 0) + 1
        self._counts[key] = count
        while len(self._counts) > self.capacity:
            self._counts.popitem(last=False)
        return count

    def forget(self, key: str) -> None:
        self._counts.pop(key, None)


# Records a delivery on its dead path before it is rejected (queues without a dead-letter
# exchange); raising means "not recorded", and the delivery is requeued instead.
DeadLetterHook = Callable[[AbstractIncomingMessage, str], Awaitable[None]]


class Settler:
    """Applies :func:`decide` to deliveries: the only caller of ack, nack and reject."""

    def __init__(
        self,
        policy: AckPolicy,
        *,
        capacity: int = 10_000,
        dead_letter: DeadLetterHook | None = None,
    ) -> None:
        self.policy = policy
        self.requeues = RequeueCounts(capacity)
        self.dead_letter = dead_letter

    async def settle(
        self,
        message: AbstractIncomingMessage,
        outcome: Outcome,
        *,
        queue: str,
        reason: str | None = None,
        error: BaseException | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> Decision:
        """Decide and apply; returns what was applied. Requeues sleep their pause first."""
        key = delivery_key(message.message_id, message.body)
        requeues = self.requeues.get(key)
        decision = decide(outcome, requeues=requeues, policy=self.policy)
        extra: dict[str, Any] = {
            **(fields or {}),
            "queue": queue,
            "message_id": message.message_id,
            "max_requeues": self.policy.max_requeues,
        }
        if reason is not None:
            extra["reason"] = reason
        if decision.action is Action.REJECT:
            rejected = {**extra, "action": decision.name, "requeues": requeues}
            if decision.name == "requeue_limit":
                log.error(
                    "requeue limit reached; rejected to the dead path",
                    extra=rejected,
                    exc_info=error,
                )
            else:
                log.error("poison message rejected to the dead path", extra=rejected)
            if not await self._record_dead(message, decision, requeues, reason, rejected):
                decision = Decision(Action.REQUEUE, "requeue", self.policy.max_pause)
        if decision.action is Action.REQUEUE:
            log.warning(
                "delivery failed; requeued after a pause",
                extra={
                    **extra,
                    "action": "requeue",
                    "requeues": self.requeues.bump(key),
                    "pause": decision.pause,
                },
                exc_info=error,
            )
            await asyncio.sleep(decision.pause)
        elif self.requeues:
            self.requeues.forget(key)
        await self._apply(message, decision, queue, {**extra, "action": decision.name})
        return decision

    async def ack_all(
        self, messages: Sequence[AbstractIncomingMessage], *, queue: str, multiple: bool = False
    ) -> None:
        """Ack a handled batch (the hot path: no log line, one metric update).

        With ``multiple`` (the consumer has its channel to itself, and settles each batch
        before it takes the next), one ``basic.ack`` with ``multiple=True`` on the batch's
        last delivery acks the whole batch: deliveries on a channel carry increasing tags,
        and every earlier one was settled with an earlier batch. A batch whose deliveries
        came on different channels (a reconnect) is acked one by one.
        """
        if self.requeues:
            for message in messages:
                self.requeues.forget(delivery_key(message.message_id, message.body))
        last = messages[-1] if messages else None
        if last is None:
            return
        try:
            one_channel = all(m.channel is last.channel for m in messages)
        except ChannelInvalidStateError:  # aio-pika's message.channel once it has closed
            DELIVERIES_SETTLED.labels(queue, "settle_failed").inc(len(messages))
            log.warning(
                "channel closed before the batch was acked; the broker redelivers it",
                extra={"queue": queue, "action": "settle_failed", "size": len(messages)},
            )
            return
        if multiple and len(messages) > 1 and one_channel:
            one = Decision(Action.ACK, "ack", multiple=True)
            if await self._apply(last, one, queue, None, count=False):
                DELIVERIES_SETTLED.labels(queue, "ack").inc(len(messages))
            return
        acked = 0
        for message in messages:
            if await self._apply(message, Decision(Action.ACK, "ack"), queue, None, count=False):
                acked += 1
        if acked:
            DELIVERIES_SETTLED.labels(queue, "ack").inc(acked)

    async def requeue_all(self, messages: Sequence[AbstractIncomingMessage], *, queue: str) -> None:
        """Give a batch back to the broker (each failure to is logged: a closed channel's
        deliveries come again anyway)."""
        for message in messages:
            await self._apply(message, Decision(Action.REQUEUE, "requeue"), queue, None)

    async def _record_dead(
        self,
        message: AbstractIncomingMessage,
        decision: Decision,
        requeues: int,
        reason: str | None,
        extra: dict[str, Any],
    ) -> bool:
        if self.dead_letter is None:
            return True
        why = reason or "no reason given"
        if decision.name == "requeue_limit":
            why = f"still failing after {requeues} requeues: {why}"
        why = f"{decision.name}: {why}"
        try:
            await self.dead_letter(message, why)
        except Exception:
            log.error(
                "dead path unavailable; delivery requeued",
                extra={**extra, "action": "dead_letter_failed"},
                exc_info=True,
            )
            return False
        return True

    async def _apply(
        self,
        message: AbstractIncomingMessage,
        decision: Decision,
        queue: str,
        extra: dict[str, Any] | None,
        *,
        count: bool = True,
    ) -> bool:
        try:
            if decision.action is Action.ACK:
                await message.ack(multiple=decision.multiple)
            elif decision.action is Action.REJECT:
                await message.reject(requeue=False)
            else:
                await message.nack(requeue=True)
        except Exception:
            DELIVERIES_SETTLED.labels(queue, "settle_failed").inc()
            log.warning(
                "settling failed; the broker redelivers when the channel closes",
                extra={
                    **(extra or {"queue": queue, "message_id": message.message_id}),
                    "action": "settle_failed",
                    "settlement": decision.action.value,
                },
                exc_info=True,
            )
            return False
        if count:
            DELIVERIES_SETTLED.labels(queue, decision.name).inc()
        return True
