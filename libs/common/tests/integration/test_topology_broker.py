"""The topology as the broker sees it, read back through the management HTTP API."""

from urllib.parse import quote

import aio_pika
import pytest

from jobs_common import topology
from jobs_common.rabbit import RabbitBus
from jobs_testing.plugin import RabbitServer

pytestmark = pytest.mark.integration


async def test_declared_queues_and_bindings_match_the_module(
    rabbit_server: RabbitServer, rabbit_vhost: str
) -> None:
    bus = await RabbitBus.open(rabbit_server.url_for(rabbit_vhost), name="topology-test")
    # Declaring twice is idempotent: the second declaration uses the same arguments.
    await topology.declare_topology(bus.channel)
    await bus.close()

    vhost = quote(rabbit_vhost, safe="")
    queues = (await rabbit_server.management("GET", f"/queues/{vhost}")).json()
    by_name = {q["name"]: q for q in queues}
    assert set(by_name) == set(topology.ALL_QUEUES)
    for name, queue in by_name.items():
        assert queue["durable"] is True
        assert queue["arguments"] == topology.queue_arguments(name)

    exchanges = (await rabbit_server.management("GET", f"/exchanges/{vhost}")).json()
    kinds = {e["name"]: e["type"] for e in exchanges if e["name"].startswith("jobs.")}
    assert kinds == {"jobs.exchange": "direct", "jobs.dlx": "direct", "jobs.events": "topic"}

    bindings = (await rabbit_server.management("GET", f"/bindings/{vhost}")).json()
    seen = {(b["source"], b["destination"], b["routing_key"]) for b in bindings if b["source"]}
    expected = {(b.exchange, b.queue, b.routing_key) for b in topology.bindings()}
    assert seen == expected


async def test_expired_ready_message_is_dead_lettered_to_jobs_dead(
    rabbit_server: RabbitServer, rabbit_vhost: str
) -> None:
    bus = await RabbitBus.open(rabbit_server.url_for(rabbit_vhost), name="ttl-test")
    try:
        message = aio_pika.Message(b"{}", expiration=0.05)  # per-message TTL shortens the wait
        await bus.topology.jobs.publish(message, topology.READY_LOW, mandatory=True)
        dead = bus.topology.queues[topology.DEAD]
        async with dead.iterator(timeout=10) as iterator:
            async for incoming in iterator:
                death = incoming.headers["x-death"][0]
                assert death["queue"] == topology.READY_LOW
                assert death["reason"] == "expired"
                await incoming.ack()
                break
    finally:
        await bus.close()


async def test_unroutable_publish_raises_instead_of_silently_confirming(rabbit_url: str) -> None:
    bus = await RabbitBus.open(rabbit_url, name="mandatory-test")
    try:
        with pytest.raises(aio_pika.exceptions.PublishError):
            await bus.topology.jobs.publish(aio_pika.Message(b"x"), "no.such.key", mandatory=True)
    finally:
        await bus.close()
