"""The gateway's HTTP/1.1 client against a real local server speaking raw HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from jobs_common.serve import KEEP_ALIVE_SECONDS
from jobs_gateway.adapters.http1 import Http1Client, UpstreamError, UpstreamTimeout
from jobs_gateway.adapters.upstream import IDLE_CONNECTION_SECONDS, build_client

pytestmark = pytest.mark.unit

Answer = Callable[[bytes, bytes], Awaitable[bytes | None]]  # (head, body) -> raw answer


@asynccontextmanager
async def server(answer: Answer) -> AsyncIterator[tuple[str, list[int]]]:
    """An HTTP server on 127.0.0.1; yields its URL and the requests per connection."""
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(0)
        index = len(connections) - 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                connections[index] += 1
                raw = await answer(head, body)
                if raw is None:
                    break
                writer.write(raw)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield f"http://127.0.0.1:{port}", connections


def client(**overrides: float) -> Http1Client:
    settings = {"timeout": 2.0, "connect_timeout": 1.0, "max_connections": 4, "idle_seconds": 30.0}
    return Http1Client(**(settings | overrides))  # type: ignore[arg-type]


async def echo(head: bytes, body: bytes) -> bytes:
    request_line = head.split(b"\r\n", 1)[0]
    content = request_line + b"|" + body
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (
        len(content),
        content,
    )


async def test_requests_reuse_one_keep_alive_connection() -> None:
    async with server(echo) as (url, connections):
        http = client()
        for n in range(3):
            answer = await http.request("POST", f"{url}/api/jobs?x={n}", content=b"{}")
            assert answer.status_code == 200
            assert answer.content == b"POST /api/jobs?x=%d HTTP/1.1|{}" % n
            assert answer.headers["content-type"] == "text/plain"
        await http.aclose()
    assert connections == [3]


async def test_a_chunked_answer_is_read_whole() -> None:
    async def chunked(head: bytes, body: bytes) -> bytes:
        return (
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        )

    async with server(chunked) as (url, _):
        http = client()
        answer = await http.request("GET", f"{url}/x")
        await http.aclose()
    assert (answer.status_code, answer.content) == (201, b"hello world")


async def test_connection_close_and_idle_connections_are_not_reused() -> None:
    closing = True

    async def answer(head: bytes, body: bytes) -> bytes:
        extra = b"Connection: close\r\n" if closing else b""
        return b"HTTP/1.1 204 No Content\r\n" + extra + b"\r\n"

    async with server(answer) as (url, connections):
        http = client(idle_seconds=0.05)
        await http.request("DELETE", f"{url}/a")
        await http.request("DELETE", f"{url}/a")  # the first said close
        closing = False
        await http.request("DELETE", f"{url}/a")
        await http.request("DELETE", f"{url}/a")  # reused
        await asyncio.sleep(0.1)
        await http.request("DELETE", f"{url}/a")  # idle too long: a new one
        await http.aclose()
    assert connections == [1, 1, 2, 1]


async def test_no_answer_in_time_is_a_timeout_and_a_refused_connection_an_error() -> None:
    async def silent(head: bytes, body: bytes) -> bytes:
        await asyncio.sleep(5)
        return b""

    async with server(silent) as (url, _):
        with pytest.raises(UpstreamTimeout):
            await client(timeout=0.2).request("GET", f"{url}/slow")
    with pytest.raises(UpstreamError) as refused:
        await client().request("GET", url)  # the server is gone
    assert not isinstance(refused.value, UpstreamTimeout)


async def test_waiting_for_a_free_connection_counts_against_the_timeout() -> None:
    async def slow(head: bytes, body: bytes) -> bytes:
        await asyncio.sleep(0.5)
        return b"HTTP/1.1 204 No Content\r\n\r\n"

    async with server(slow) as (url, _):
        http = client(timeout=0.8, max_connections=1)
        first = asyncio.create_task(http.request("GET", f"{url}/a"))
        await asyncio.sleep(0.05)
        with pytest.raises(UpstreamTimeout):  # 0.5 s waiting for the only connection, 0.5 s more
            await http.request("GET", f"{url}/b")
        assert (await first).status_code == 204
        await http.aclose()


async def test_an_answer_cut_short_is_an_error() -> None:
    async def cut(head: bytes, body: bytes) -> bytes | None:
        return None  # closes the connection without answering

    async with server(cut) as (url, _):
        with pytest.raises(UpstreamError, match="closed before the answer"):
            await client().request("GET", f"{url}/x")


async def test_a_header_that_would_split_the_request_is_refused() -> None:
    async with server(echo) as (url, connections):
        with pytest.raises(UpstreamError, match="line break"):
            await client().request("GET", f"{url}/x", headers={"X-User": "a\r\nX-Admin: 1"})
    assert connections == []


async def test_idle_connections_are_dropped_before_the_services_close_them() -> None:
    """With equal idle timeouts a request can go out on a connection the service is closing."""
    http = build_client(timeout=5, connect_timeout=1, max_connections=16)
    assert http.idle_seconds == IDLE_CONNECTION_SECONDS < KEEP_ALIVE_SECONDS
