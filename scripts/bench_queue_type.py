"""Classic versus quorum queues on this broker: ``python scripts/bench_queue_type.py``.

Publishes N persistent 1 KiB messages with publisher confirms (many in flight, as the outbox
relays do) to a queue of each type on a throwaway vhost, then consumes and acks them with
prefetch 20, and prints messages per second for both phases. Figures only.
"""

from __future__ import annotations

import asyncio
import os
import time

import aio_pika

from jobs_testing.infra import resolve_rabbitmq
from jobs_testing.plugin import RabbitServer

BODY = b"x" * 1024


async def measure(url: str, queue_type: str, n: int) -> tuple[float, float]:
    connection = await aio_pika.connect(url)
    try:
        channel = await connection.channel(publisher_confirms=True)
        queue = await channel.declare_queue(
            f"bench.{queue_type}", durable=True, arguments={"x-queue-type": queue_type}
        )
        started = time.perf_counter()
        for offset in range(0, n, 500):
            await asyncio.gather(
                *(
                    channel.default_exchange.publish(
                        aio_pika.Message(BODY, delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
                        queue.name,
                    )
                    for _ in range(min(500, n - offset))
                )
            )
        publish_rate = n / (time.perf_counter() - started)
        await channel.set_qos(prefetch_count=20)
        done = asyncio.Event()
        consumed = 0

        async def on_message(message: aio_pika.abc.AbstractIncomingMessage) -> None:
            nonlocal consumed
            await message.ack()
            consumed += 1
            if consumed == n:
                done.set()

        started = time.perf_counter()
        tag = await queue.consume(on_message)
        await done.wait()
        consume_rate = n / (time.perf_counter() - started)
        await queue.cancel(tag)
        await queue.delete(if_unused=False, if_empty=False)
        return publish_rate, consume_rate
    finally:
        await connection.close()


async def main() -> None:
    n = int(os.environ.get("N", "20000"))
    resolved, management = resolve_rabbitmq()
    server = RabbitServer(resolved.url, management)
    vhost = await server.create_vhost()
    try:
        print(f"RabbitMQ: {resolved.source}; {n} persistent 1 KiB messages per queue type")
        for queue_type in ("classic", "quorum"):
            publish, consume = await measure(server.url_for(vhost), queue_type, n)
            print(
                f"  {queue_type:8s} publish (confirmed) {publish:8.0f} msg/s   "
                f"consume (acked) {consume:8.0f} msg/s"
            )
    finally:
        await server.delete_vhost(vhost)
        resolved.close()


if __name__ == "__main__":
    asyncio.run(main())
