"""The coalescing AMQP transport: the frames of half a millisecond in one socket write, order
kept, and a real broker round trip (confirmed publishes, consumed in order) over it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import aio_pika
import pytest
from aiormq.exceptions import AMQPConnectionError
from yarl import URL

from jobs_common.amqp_transport import (
    FLUSH_AT_BYTES,
    FLUSH_DELAY_SECONDS,
    CoalescingRobustConnection,
    CoalescingStreamWriter,
    CoalescingTCPTransportFactory,
    connect_coalescing,
)
from jobs_common.rabbit import connect
from jobs_testing.infra import free_port
from jobs_testing.plugin import RabbitServer
from jobs_testing.waiting import eventually

pytestmark = pytest.mark.integration


class Sink:
    """A TCP server that keeps what it receives."""

    def __init__(self) -> None:
        self.received = bytearray()
        self.got = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            self.received += data
            self.got.set()
        writer.close()


@pytest.fixture
async def sink() -> AsyncIterator[tuple[Sink, int]]:
    sink = Sink()
    server = await asyncio.start_server(sink.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield sink, port
    server.close()
    await server.wait_closed()


async def open_writer(port: int) -> tuple[CoalescingStreamWriter, list[bytes]]:
    """A coalescing writer to the sink, and the writes its transport was handed."""
    _, writer = await CoalescingTCPTransportFactory().create(URL(f"amqp://127.0.0.1:{port}/"))
    assert isinstance(writer, CoalescingStreamWriter)
    handed: list[bytes] = []
    transport_write = writer.transport.write

    def spy(data: bytes | bytearray | memoryview) -> None:
        handed.append(bytes(data))
        transport_write(data)

    writer.transport.write = spy  # type: ignore[method-assign]
    return writer, handed


async def test_frames_written_together_reach_the_transport_as_one_write(
    sink: tuple[Sink, int],
) -> None:
    server, port = sink
    writer, handed = await open_writer(port)
    for frame in (b"one,", b"two,", b"three"):
        writer.write(frame)
    await asyncio.sleep(0)
    writer.write(b"|after a pass")  # a publisher's next turn on its channel
    assert handed == []  # held for FLUSH_DELAY_SECONDS
    await asyncio.sleep(FLUSH_DELAY_SECONDS * 4)
    assert handed == [b"one,two,three|after a pass"]
    writer.write(b";next")
    await asyncio.sleep(FLUSH_DELAY_SECONDS * 4)
    assert handed == [b"one,two,three|after a pass", b";next"]
    await asyncio.wait_for(server.got.wait(), 5)
    writer.close()
    await writer.wait_closed()
    assert bytes(server.received).startswith(b"one,two,three|after a pass")


async def test_drain_waits_for_the_pass_a_large_write_and_close_do_not(
    sink: tuple[Sink, int],
) -> None:
    server, port = sink
    writer, handed = await open_writer(port)
    writer.write(b"ack")
    await writer.drain()  # aiormq drains after every ack: that must not make it a write
    writer.write(b"+publish")
    await asyncio.sleep(FLUSH_DELAY_SECONDS * 4)
    assert handed == [b"ack+publish"]
    big = b"x" * FLUSH_AT_BYTES
    writer.write(big)  # past the threshold: handed over at once
    assert handed[-1] == big
    writer.write(b"|before close")
    writer.close()
    assert handed[-1] == b"|before close"
    await writer.wait_closed()
    expected = b"ack+publish" + big + b"|before close"
    for _ in range(200):
        if len(server.received) >= len(expected):
            break
        await asyncio.sleep(0.01)
    assert bytes(server.received) == expected


async def test_a_broker_round_trip_over_the_coalescing_transport(
    rabbit_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushes: list[int] = []
    flush = CoalescingStreamWriter.flush

    def counted(self: CoalescingStreamWriter) -> None:
        flushes.append(1)
        flush(self)

    monkeypatch.setattr(CoalescingStreamWriter, "flush", counted)
    connection = await connect(rabbit_url, name="transport-test")
    try:
        channel = await connection.channel(publisher_confirms=True)
        queue = await channel.declare_queue("", exclusive=True)
        bodies = [f"m{i}".encode() for i in range(200)]
        await asyncio.gather(
            *(
                channel.default_exchange.publish(aio_pika.Message(b), routing_key=queue.name)
                for b in bodies
            )
        )
        received: list[bytes] = []
        async with queue.iterator() as messages:
            async for message in messages:
                received.append(message.body)
                await message.ack()
                if len(received) == len(bodies):
                    break
        assert received == bodies  # confirmed, delivered in order
        assert flushes, "connect() did not use the coalescing transport"
    finally:
        await connection.close()


async def test_a_connection_the_broker_closed_comes_back_on_the_coalescing_transport(
    rabbit_server: RabbitServer, rabbit_vhost: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[CoalescingStreamWriter] = []
    init = CoalescingStreamWriter.__init__

    def remembered(self: CoalescingStreamWriter, *args: Any) -> None:
        init(self, *args)
        writers.append(self)

    monkeypatch.setattr(CoalescingStreamWriter, "__init__", remembered)
    name = f"reconnect-{uuid.uuid4().hex[:8]}"
    connection = await connect(rabbit_server.url_for(rabbit_vhost), name=name)
    try:
        channel = await connection.channel(publisher_confirms=True)
        queue = await channel.declare_queue(f"q-{name}", durable=True)
        await channel.default_exchange.publish(aio_pika.Message(b"before"), routing_key=queue.name)
        assert len(writers) == 1

        async def broker_side() -> list[dict[str, Any]]:
            listed = (await rabbit_server.management("GET", "/connections")).json()
            return [c for c in listed if c["client_properties"].get("connection_name") == name]

        (theirs,) = await eventually(broker_side, what="the connection listed by the broker")
        await rabbit_server.management("DELETE", f"/connections/{quote(theirs['name'], safe='')}")

        async def reconnected() -> bool:
            return len(writers) == 2 and connection.connected.is_set()

        await eventually(reconnected, timeout=30, what="the robust connection back")
        channel = await connection.channel(publisher_confirms=True)
        await channel.default_exchange.publish(aio_pika.Message(b"after"), routing_key=queue.name)
        bodies = []
        for _ in range(2):
            message = await eventually(
                lambda: channel_get(channel, queue.name), what="a message on the queue"
            )
            bodies.append(message.body)
            await message.ack()
        assert bodies == [b"before", b"after"]
    finally:
        await connection.close()


async def channel_get(
    channel: aio_pika.abc.AbstractChannel, name: str
) -> aio_pika.abc.AbstractIncomingMessage | None:
    queue = await channel.get_queue(name)
    return await queue.get(fail=False)


async def test_a_connection_that_never_connected_is_closed_not_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Left to its ``__del__``, it would schedule a close no one awaits (seen as a warning
    or an error in whatever code the garbage collector interrupted)."""
    closed: list[CoalescingRobustConnection] = []
    original = CoalescingRobustConnection.close

    async def close(self: CoalescingRobustConnection, *args: Any, **kwargs: Any) -> Any:
        closed.append(self)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(CoalescingRobustConnection, "close", close)
    with pytest.raises(AMQPConnectionError):
        await connect_coalescing(f"amqp://guest:guest@127.0.0.1:{free_port()}/", name="refused")
    assert len(closed) == 1 and closed[0].is_closed
