"""A lean HTTP/1.1 keep-alive client for the gateway's hop to its own services.

httpx cost the gateway about 0.6 ms of CPU per proxied request (request and response
models, httpcore's pool bookkeeping, anyio streams): half of the gateway's CPU, the largest
single cost of a submission. This client does what the hop needs and no more: plain HTTP to
the platform's own services, one request per connection at a time, connections reused last
in first out and dropped after ``idle_seconds`` (below the services' keep-alive, see
``jobs_common.serve``), answers parsed by httptools (llhttp, the parser uvicorn uses:
Content-Length and chunked bodies). It never retries: a request that may have reached the
service is not sent twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httptools

# Set by this client from the request itself; a caller's value is dropped.
OWN_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class UpstreamError(Exception):
    """No answer: the connection failed, closed early, or the answer could not be read."""


class UpstreamTimeout(UpstreamError):
    """No answer within the timeout."""


@dataclass(frozen=True)
class Answer:
    status_code: int
    headers: dict[str, str]  # names in lower case
    content: bytes


class _Reply:
    """httptools callbacks: what one answer carried."""

    def __init__(self) -> None:
        self.headers: dict[str, str] = {}
        self.chunks: list[bytes] = []
        self.complete = False
        self.keep_alive = False
        self.parser = httptools.HttpResponseParser(self)

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        # Asked here: once the message is complete the parser has reset for the next one.
        self.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float

    def close(self) -> None:
        self.writer.close()


def request_head(
    method: str, target: str, host: str, headers: Mapping[str, str], body: bytes
) -> bytes:
    """The request line and headers; a header that could split the request is refused."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    for name, value in headers.items():
        if name.lower() in OWN_HEADERS:
            continue
        if any(c in name or c in value for c in "\r\n\0"):
            raise UpstreamError(f"header {name!r} holds a line break")
        lines.append(f"{name}: {value}")
    if body or method in BODY_METHODS:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def read_answer(reader: asyncio.StreamReader) -> tuple[Answer, bool]:
    """One answer from ``reader``, and whether the connection may carry another request."""
    reply = _Reply()
    try:
        while not reply.complete:
            data = await reader.read(65536)
            if not data:
                raise UpstreamError("the connection closed before the answer was complete")
            reply.parser.feed_data(data)
    except httptools.HttpParserError as exc:
        raise UpstreamError(f"unreadable answer: {exc}") from exc
    answer = Answer(reply.parser.get_status_code(), reply.headers, b"".join(reply.chunks))
    return answer, reply.keep_alive


class Pool:
    """Connections to one ``host:port``, at most ``max_connections`` at a time."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        max_connections: int,
        connect_timeout: float,
        idle_seconds: float,
    ) -> None:
        self.host, self.port = host, port
        self.connect_timeout = connect_timeout
        self.idle_seconds = idle_seconds
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: list[_Connection] = []

    async def send(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes, timeout: float
    ) -> Answer:
        """One exchange within ``timeout``, the wait for a free connection included."""
        data = request_head(method, target, f"{self.host}:{self.port}", headers, body) + body
        try:
            async with asyncio.timeout(timeout), self._slots:
                return await self._exchange(data)
        except TimeoutError as exc:
            raise UpstreamTimeout(f"no answer within {timeout}s") from exc

    async def _exchange(self, data: bytes) -> Answer:
        connection = await self._acquire()
        try:
            connection.writer.write(data)
            answer, keep = await read_answer(connection.reader)
        except (OSError, asyncio.IncompleteReadError) as exc:
            connection.close()
            raise UpstreamError(repr(exc)) from exc
        except BaseException:  # a timeout or a cancellation: the connection's state is unknown
            connection.close()
            raise
        if keep:
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
        else:
            connection.close()
        return answer

    async def _acquire(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            fresh = now - connection.idle_since < self.idle_seconds
            if fresh and not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection
            connection.close()
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(self.host, self.port)
        except TimeoutError as exc:
            raise UpstreamTimeout(f"no connection within {self.connect_timeout}s") from exc
        except OSError as exc:
            raise UpstreamError(repr(exc)) from exc
        return _Connection(reader, writer, now)

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()


class Http1Client:
    """A :class:`Pool` per ``host:port``; plain ``http://`` URLs only (the internal hop)."""

    def __init__(
        self,
        *,
        timeout: float,
        connect_timeout: float,
        max_connections: int,
        idle_seconds: float,
    ) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_connections = max_connections
        self.idle_seconds = idle_seconds
        self._pools: dict[tuple[str, int], Pool] = {}

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes = b"",
        timeout: float | None = None,
    ) -> Answer:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"an internal http:// URL is needed, not {url!r}")
        key = (parts.hostname, parts.port or 80)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = Pool(
                *key,
                max_connections=self.max_connections,
                connect_timeout=self.connect_timeout,
                idle_seconds=self.idle_seconds,
            )
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return await pool.send(
            method, target, headers or {}, content, self.timeout if timeout is None else timeout
        )

    async def aclose(self) -> None:
        for pool in self._pools.values():
            pool.close()
