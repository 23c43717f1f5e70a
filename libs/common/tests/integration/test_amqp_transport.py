"""The coalescing AMQP transport: the frames of half a millisecond in one socket write, order
kept, and a real broker round trip (confirmed publishes, consumed in order) over it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aio_pika
import pytest
from yarl import URL

from jobs_common.amqp_transport import (
    FLUSH_AT_BYTES,
    FLUSH_DELAY_SECONDS,
    CoalescingStreamWriter,
    CoalescingTCPTransportFactory,
)
from jobs_common.rabbit import connect

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
