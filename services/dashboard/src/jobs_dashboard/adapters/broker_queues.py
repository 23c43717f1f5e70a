"""What the broker says of the ready queues: ready messages and consumers, per queue."""

from __future__ import annotations

import asyncio
import logging

from jobs_common.rabbit import RabbitBus
from jobs_common.topology import queue_arguments

log = logging.getLogger(__name__)

BrokerCounts = tuple[int, int]  # (ready messages, consumers)


async def ready_queue_counts(
    bus: RabbitBus | None, names: tuple[str, ...], *, timeout: float = 2.0
) -> dict[str, BrokerCounts]:
    """``name -> (ready messages, consumers)``; queues the broker did not answer for are
    missing (the broker away, or slower than ``timeout``). Declaring a queue again with its
    own arguments is how AMQP reports its counts."""
    if bus is None or bus.connection.is_closed:
        return {}

    async def one(name: str) -> tuple[str, BrokerCounts] | None:
        queue = bus.topology.queues.get(name)
        try:
            if queue is None:  # a named queue's: declared again with its own arguments
                declared_queue = bus.channel.declare_queue(
                    name, durable=True, arguments=queue_arguments(name)
                )
                queue = await asyncio.wait_for(declared_queue, timeout=timeout)
            declared = await asyncio.wait_for(queue.declare(), timeout=timeout)
        except Exception as exc:
            log.warning("queue counts unavailable", extra={"queue": name, "error": repr(exc)})
            return None
        return name, (declared.message_count or 0, declared.consumer_count or 0)

    answers = await asyncio.gather(*(one(name) for name in names))
    return dict(answer for answer in answers if answer is not None)
