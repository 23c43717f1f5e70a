"""An open-loop load generator for the gateway (used by ``bench_overload.py``), and the
keep-alive client every bench sends its requests with.

Requests fire at their scheduled times whatever the earlier answers (open loop), with a bound
on the requests outstanding. The client is a minimal HTTP/1.1 keep-alive client: httpx costs
about 1.1 ms of CPU per request here (this client 0.09 ms, measured on one stack, 64 clients),
and with a few hundred requests outstanding an httpx generator fell 12 s behind its schedule
at 200 jobs/s, so it measured itself rather than the platform.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# A job that does nothing: what every benchmark submits.
NOOP = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}


class ProtocolError(Exception):
    """An answer this client does not read (no Content-Length, a malformed head)."""


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float


class KeepAliveClient:
    """POST pre-encoded JSON bodies (or GET) over keep-alive connections, one request per
    connection at a time; connections are opened on demand and reused last-in first-out."""

    IDLE_S = 3.0  # uvicorn closes a keep-alive connection idle for 5 s: never reuse one near it

    def __init__(self, url: str, *, timeout: float) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        self.extra_headers = b""
        self.idle: list[_Connection] = []

    def authorize(self, token: str) -> None:
        self.extra_headers = f"Authorization: Bearer {token}\r\n".encode()

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """The status and body of the answer; TimeoutError, OSError, ProtocolError,
        IncompleteReadError when there was none."""
        return await self.request("POST", path, body)

    async def get(self, path: str) -> tuple[int, bytes]:
        """As :meth:`post`, for a GET (``bench_history.py``'s reads)."""
        return await self.request("GET", path, b"")

    async def request(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        connection = await self._acquire()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        ).encode()
        try:
            connection.writer.write(head + self.extra_headers + b"\r\n" + body)
            status, answer, keep = await asyncio.wait_for(
                self._read(connection.reader), self.timeout
            )
        except BaseException:
            connection.writer.close()
            raise
        if keep:
            connection.idle_since = time.monotonic()
            self.idle.append(connection)
        else:
            connection.writer.close()
        return status, answer

    async def _acquire(self) -> _Connection:
        now = time.monotonic()
        while self.idle:
            connection = self.idle.pop()
            if now - connection.idle_since < self.IDLE_S and not connection.reader.at_eof():
                return connection
            connection.writer.close()
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port), self.timeout
        )
        return _Connection(reader, writer, now)

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split(" ", 2)[1])
        except (IndexError, ValueError) as exc:
            raise ProtocolError(f"status line {lines[0]!r}") from exc
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if "content-length" not in fields:
            raise ProtocolError("an answer without Content-Length")
        body = await reader.readexactly(int(fields["content-length"]))
        return status, body, fields.get("connection", "").lower() != "close"

    def close(self) -> None:
        for connection in self.idle:
            connection.writer.close()
        self.idle.clear()


@dataclass(frozen=True)
class Request:
    path: str
    body: bytes
    jobs: int


def plan(rate: float, duration: float, share: float, size: int) -> list[tuple[float, Request]]:
    """(due second, request) of an evenly paced load of ``rate`` jobs/s: single requests
    (priorities 1-3 in turn) and batches of ``size`` carrying ``share`` of the jobs."""

    def body(value: object) -> bytes:
        return json.dumps(value).encode()

    singles = [
        Request("/api/jobs", body({"type": "simulate", "priority": p, "payload": NOOP}), 1)
        for p in (1, 2, 3)
    ]
    spec = {"type": "simulate", "priority": 2, "payload": NOOP}
    batch = Request("/api/batches", body({"jobs": [spec] * size}), size)
    single_rate, batch_rate = rate * (1 - share), rate * share / size
    due: list[tuple[float, Request]] = []
    if single_rate > 0:
        due += [(k / single_rate, singles[k % 3]) for k in range(round(duration * single_rate))]
    if batch_rate > 0:
        due += [((k + 0.5) / batch_rate, batch) for k in range(round(duration * batch_rate))]
    return sorted(due, key=lambda item: item[0])


@dataclass
class Traffic:
    """What the client sent and what the gateway answered."""

    accepted: list[str] = field(default_factory=list)
    accept_latencies: list[float] = field(default_factory=list)  # seconds until the 202
    refused: Counter[str] = field(default_factory=Counter)  # requests, by status or error
    refused_jobs: int = 0
    refusal_bodies: dict[str, str] = field(default_factory=dict)  # the first one per reason
    sent_requests: int = 0
    sent_jobs: int = 0
    unsent_requests: int = 0  # due while the bound of requests in flight was reached
    unsent_jobs: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    lateness: list[float] = field(default_factory=list)  # seconds past the due time

    async def send(self, client: KeepAliveClient, request: Request) -> None:
        self.sent_requests += 1
        self.sent_jobs += request.jobs
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        started = time.perf_counter()
        try:
            status, body = await client.post(request.path, request.body)
        except TimeoutError:
            self.refuse("timeout", request, "")
        except (OSError, asyncio.IncompleteReadError, ProtocolError) as exc:
            self.refuse(type(exc).__name__, request, str(exc))
        else:
            if status == 202:
                answer = json.loads(body)
                ids = answer["jobIds"] if request.jobs > 1 else [answer["jobId"]]
                self.accepted.extend(str(i) for i in ids)
                self.accept_latencies.append(time.perf_counter() - started)
            else:
                self.refuse(str(status), request, body[:300].decode(errors="replace"))
        finally:
            self.in_flight -= 1

    def refuse(self, reason: str, request: Request, body: str) -> None:
        self.refused[reason] += 1
        self.refused_jobs += request.jobs
        self.refusal_bodies.setdefault(reason, body)


async def offer(
    client: KeepAliveClient, traffic: Traffic, due: list[tuple[float, Request]], bound: int
) -> set[asyncio.Task[None]]:
    """Fire each request at its due time (open loop); the requests still outstanding."""
    outstanding: set[asyncio.Task[None]] = set()
    t0 = time.perf_counter()
    for at, request in due:
        delay = t0 + at - time.perf_counter()
        await asyncio.sleep(max(delay, 0.0))
        traffic.lateness.append(max(-delay, 0.0))
        if traffic.in_flight >= bound:
            traffic.unsent_requests += 1
            traffic.unsent_jobs += request.jobs
            continue
        task = asyncio.create_task(traffic.send(client, request))
        outstanding.add(task)
        task.add_done_callback(outstanding.discard)
    return outstanding
