"""What this broker answers to quorum queues with our arguments: ``python scripts/probe_quorum.py``.

On a throwaway vhost (deleted afterwards), declares a quorum queue per case: the ready queues'
arguments from ``jobs_common.topology``, ``x-max-priority``, at-least-once dead-lettering, a
delivery limit, a leader locator, the gateway's live-queue arguments, the exclusive and
auto-delete per-consumer queues, and a classic queue redeclared as quorum. Then three
behaviours: a message whose TTL runs out on a quorum ready queue reaches the dead-letter queue,
one rejected without requeue does too, and whether a quorum queue delivers a high-priority
message before an earlier low-priority one. Prints one row per case with the broker's answer
(docs/scaling.md, "RabbitMQ as a cluster"). Facts about this broker, not timings.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from typing import Any

import aio_pika
from aio_pika.abc import AbstractChannel, AbstractRobustConnection
from aiormq.exceptions import AMQPError

from jobs_common.topology import (
    DEAD,
    DEAD_LETTER_EXCHANGE,
    JOBS_EXCHANGE,
    READY_HIGH,
    queue_arguments,
)
from jobs_testing.infra import resolve_rabbitmq
from jobs_testing.plugin import RabbitServer

QUORUM: dict[str, Any] = {"x-queue-type": "quorum"}


def ready_arguments() -> dict[str, Any]:
    """A ready queue's arguments as declared today, with the type switched to quorum."""
    return queue_arguments(READY_HIGH) | QUORUM


@dataclass(frozen=True)
class Case:
    name: str
    arguments: dict[str, Any]
    durable: bool = True
    exclusive: bool = False
    auto_delete: bool = False


CASES = [
    Case("quorum, no arguments", QUORUM),
    Case("ready queue's arguments (TTL 60 s, DLX jobs.dlx)", ready_arguments()),
    Case("+ x-max-priority 10", ready_arguments() | {"x-max-priority": 10}),
    Case(
        "+ at-least-once dead-lettering",
        ready_arguments() | {"x-dead-letter-strategy": "at-least-once"},
    ),
    Case(
        "+ at-least-once, x-overflow reject-publish",
        ready_arguments()
        | {"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"},
    ),
    Case("+ x-delivery-limit 20", ready_arguments() | {"x-delivery-limit": 20}),
    Case(
        "+ x-queue-leader-locator balanced",
        ready_arguments() | {"x-queue-leader-locator": "balanced"},
    ),
    Case(
        "+ x-queue-leader-locator client-local",
        ready_arguments() | {"x-queue-leader-locator": "client-local"},
    ),
    Case("+ x-quorum-initial-group-size 3", ready_arguments() | {"x-quorum-initial-group-size": 3}),
    Case("+ x-queue-mode lazy", ready_arguments() | {"x-queue-mode": "lazy"}),
    Case("+ x-single-active-consumer", ready_arguments() | {"x-single-active-consumer": True}),
    Case(
        "gateway live queue (x-max-length, drop-head)",
        QUORUM | {"x-max-length": 1000, "x-overflow": "drop-head"},
    ),
    Case("non-durable", QUORUM, durable=False),
    Case("exclusive (worker control, gateway live)", QUORUM, exclusive=True),
    Case("auto-delete", QUORUM, auto_delete=True),
]


def answer_of(error: BaseException) -> str:
    text = str(error.args[0] if error.args else error)
    text = re.sub(r" in vhost '[^']*'", "", text)  # the same throwaway vhost on every row
    return f"refused: {text}" if text else f"refused: {type(error).__name__}"


async def declare(connection: AbstractRobustConnection, name: str, case: Case) -> str:
    """The broker's answer to one declaration (a refusal closes only that channel)."""
    channel = await connection.channel()
    try:
        await channel.declare_queue(
            name,
            durable=case.durable,
            exclusive=case.exclusive,
            auto_delete=case.auto_delete,
            arguments=case.arguments,
        )
    except AMQPError as error:
        return answer_of(error)
    finally:
        if not channel.is_closed:
            await channel.close()
    return "accepted"


async def redeclare_classic_as_quorum(connection: AbstractRobustConnection) -> str:
    channel = await connection.channel()
    name = "probe.classic-then-quorum"
    try:
        await channel.declare_queue(name, durable=True, arguments=queue_arguments(READY_HIGH))
        await channel.declare_queue(name, durable=True, arguments=ready_arguments())
    except AMQPError as error:
        return answer_of(error)
    finally:
        if not channel.is_closed:
            await channel.close()
    return "accepted"


async def dead_queue(channel: AbstractChannel) -> aio_pika.abc.AbstractQueue:
    dlx = await channel.declare_exchange(
        DEAD_LETTER_EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True
    )
    dead = await channel.declare_queue(DEAD, durable=True, arguments=QUORUM)
    await dead.bind(dlx, routing_key=DEAD)
    return dead


async def wait_count(queue: aio_pika.abc.AbstractQueue, count: int, timeout: float) -> int:
    """The queue's message count once it reaches ``count``, or what it is after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = (await queue.declare()).message_count or 0
        if found >= count or loop.time() > deadline:
            return found
        await asyncio.sleep(0.05)


async def behaviours(connection: AbstractRobustConnection) -> list[tuple[str, str]]:
    channel = await connection.channel(publisher_confirms=True)
    dead = await dead_queue(channel)
    jobs = await channel.declare_exchange(JOBS_EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True)
    rows = []

    # A ready message whose TTL runs out (60 s in production; 200 ms here).
    ready = await channel.declare_queue(
        "probe.ready-ttl",
        durable=True,
        arguments=ready_arguments()
        | {
            "x-message-ttl": 200,
            "x-dead-letter-strategy": "at-least-once",
            "x-overflow": "reject-publish",
        },
    )
    await ready.bind(jobs, routing_key=ready.name)
    await jobs.publish(aio_pika.Message(b"ttl", delivery_mode=2), routing_key=ready.name)
    found = await wait_count(dead, 1, timeout=5)
    rows.append(("TTL expiry on a quorum ready queue -> jobs.dead", f"{found} of 1 dead-lettered"))
    await dead.purge()

    # A delivery rejected without requeue (the poison path).
    rejecting = await channel.declare_queue(
        "probe.ready-reject", durable=True, arguments=ready_arguments()
    )
    await channel.default_exchange.publish(
        aio_pika.Message(b"poison", delivery_mode=2), routing_key=rejecting.name
    )
    poison = await rejecting.get(timeout=5)
    await poison.reject(requeue=False)
    found = await wait_count(dead, 1, timeout=5)
    rows.append(("reject(requeue=False) on a quorum queue -> jobs.dead", f"{found} of 1"))

    # A delivery limit: a message returned (nack, requeue) past it is dead-lettered.
    await dead.purge()
    limited = await channel.declare_queue(
        "probe.delivery-limit", durable=True, arguments=ready_arguments() | {"x-delivery-limit": 2}
    )
    await channel.default_exchange.publish(
        aio_pika.Message(b"crash-loop", delivery_mode=2), routing_key=limited.name
    )
    returns = 0
    while (returned := await limited.get(timeout=5, fail=False)) is not None:
        await returned.nack(requeue=True)
        returns += 1
        if returns > 10:
            break
    found = await wait_count(dead, 1, timeout=5)
    rows.append(
        (
            "x-delivery-limit 2, nack(requeue=True) each time",
            f"delivered {returns} times, then {found} of 1 dead-lettered",
        )
    )

    # Priority: a low-priority message, then a high one; which comes out first?
    order = await channel.declare_queue("probe.priority", durable=True, arguments=QUORUM)
    for body, priority in ((b"low", 1), (b"high", 9)):
        await channel.default_exchange.publish(
            aio_pika.Message(body, delivery_mode=2, priority=priority), routing_key=order.name
        )
    await wait_count(order, 2, timeout=5)
    first = await order.get(timeout=5)
    await first.ack()
    rows.append(
        (
            "priority 1 then 9 published to a quorum queue",
            f"first delivered: {first.body.decode()} (priority {first.priority})",
        )
    )
    await channel.close()
    return rows


def server_version(connection: AbstractRobustConnection) -> str:
    properties = connection.transport.connection.server_properties  # type: ignore[union-attr]
    version = properties.get("version", b"?")
    return version.decode() if isinstance(version, bytes) else str(version)


def table(rows: list[tuple[str, str]]) -> str:
    width = max(len(left) for left, _ in rows)
    return "\n".join(f"  {left:<{width}}  {right}" for left, right in rows)


async def main() -> None:
    resolved, management = resolve_rabbitmq()
    server = RabbitServer(resolved.url, management)
    vhost = await server.create_vhost()
    try:
        connection = await aio_pika.connect_robust(server.url_for(vhost))
        try:
            print(f"RabbitMQ {server_version(connection)} ({resolved.source}), vhost {vhost}")
            declared = [
                (case.name, await declare(connection, f"probe.{index}", case))
                for index, case in enumerate(CASES)
            ]
            declared.append(
                (
                    "classic ready queue redeclared as quorum",
                    await redeclare_classic_as_quorum(connection),
                )
            )
            print("\nDeclarations (x-queue-type quorum):")
            print(table(declared))
            print("\nBehaviour:")
            print(table(await behaviours(connection)))
        finally:
            await connection.close()
    finally:
        await server.delete_vhost(vhost)
        resolved.close()
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
