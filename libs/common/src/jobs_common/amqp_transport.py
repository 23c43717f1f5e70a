"""An AMQP transport that sends what one event-loop pass wrote in one ``send()``.

aiormq writes every frame (each ack, each publish) to the socket on its own. On loopback the
sender pays for the receiver's TCP processing too, so under load a worker spent a quarter of
its CPU in those ``send()`` calls, and RabbitMQ as much again reading the small segments. The
writer here buffers the frames written during one pass of the event loop and hands them to
the transport together at the start of the next; nothing waits longer than that pass, and the
order of the frames is kept. ``drain()`` and ``close()`` flush first, so a frame written
before either is never held back.

aiormq lets a connection bring its own transport factory; aio-pika's ``connect_robust`` only
passes URL parameters on, so :func:`connect_coalescing` builds the connection itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aio_pika
from aiormq.connection import TransportFactory
from aiormq.exceptions import AMQPConnectionError
from yarl import URL


class CoalescingStreamWriter(asyncio.StreamWriter):
    """A stream writer whose writes within one loop pass reach the socket as one write."""

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        protocol: asyncio.BaseProtocol,
        reader: asyncio.StreamReader | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(transport, protocol, reader, loop)
        self._loop_ref = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop_ref.call_soon(self.flush)
        self._pending.append(bytes(data))

    def flush(self) -> None:
        """Hand every buffered frame to the transport now (one write)."""
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        if not self.transport.is_closing():
            super().write(data)

    async def drain(self) -> None:
        self.flush()
        await super().drain()

    def close(self) -> None:
        self.flush()
        super().close()


class CoalescingTCPTransportFactory(TransportFactory):
    """Opens plain TCP connections (``amqp://``) with a :class:`CoalescingStreamWriter`."""

    async def create(
        self, url: URL, **kwargs: Any
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        kwargs.pop("ssl_context_provider", None)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        try:
            transport, _ = await loop.create_connection(
                lambda: protocol, host=url.host or "localhost", port=url.port or 5672, **kwargs
            )
        except OSError as exc:
            raise AMQPConnectionError(*exc.args) from exc
        return reader, CoalescingStreamWriter(transport, protocol, reader, loop)


class CoalescingRobustConnection(aio_pika.RobustConnection):
    """A robust connection whose (re)connections use :class:`CoalescingTCPTransportFactory`."""

    def __init__(self, url: URL, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        self.kwargs = {**self.kwargs, "transport_factory": CoalescingTCPTransportFactory()}


async def connect_coalescing(url: str, *, name: str) -> CoalescingRobustConnection:
    """Open a robust ``amqp://`` connection that sends a loop pass's frames together."""
    connection = CoalescingRobustConnection(URL(url), client_properties={"connection_name": name})
    await connection.connect()
    return connection
