"""GET /ws/events end to end: the real gateway under uvicorn (its lifespan running), a real
WebSocket client (websockets), real RabbitMQ (a vhost per test) where the test publishes what the
scheduler publishes, and for subscriptions a small real HTTP server standing in for the
dashboard's ``GET /api/jobs/{id}``."""

from __future__ import annotations

import asyncio
import re
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import aio_pika
import httpx
import orjson
import pytest
from aio_pika.abc import AbstractExchange
from prometheus_client import generate_latest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from jobs_common.auth import Identity, TokenKeys, issue_token
from jobs_common.contracts import (
    JobChange,
    JobChanges,
    JobLogLine,
    JobLogTail,
    JobStatus,
    Message,
)
from jobs_common.tenancy import personal_project_id
from jobs_common.topology import JOB_CHANGES, JOB_LOGS_LIVE, declare_topology
from jobs_gateway.service import create_app
from jobs_gateway.settings import Settings
from jobs_testing.infra import free_port
from jobs_testing.plugin import RabbitServer
from jobs_testing.waiting import eventually

from .test_gateway_tenancy import ok, user

pytestmark = pytest.mark.integration

TEST_JWT_SECRET = "test-jwt-secret-0123456789abcdef-0123456789"
TEST_KEYS = TokenKeys(secret=TEST_JWT_SECRET, issuer="jobs-gateway", audience="jobs-api")
TEST_INTERNAL_TOKEN = "test-internal-token-0123456789abcdef"
GATEWAY_CONNECTION = "jobs-gateway-live"
USER = "user@test.com"
AT = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


# -- the gateway, served for real -------------------------------------------------------------


@dataclass
class LiveGateway:
    url: str
    http: httpx.AsyncClient

    def ws_url(self, token: str | None) -> str:
        base = self.url.replace("http://", "ws://", 1) + "/ws/events"
        return base if token is None else f"{base}?token={quote(token, safe='')}"

    async def login(self, email: str, password: str) -> str:
        response = await self.http.post("/auth/login", json={"email": email, "password": password})
        assert response.status_code == 200, response.text
        return str(response.json()["token"])

    async def metric(self, sample: str) -> float | None:
        """The value of one exposed sample, e.g. ``gateway_ws_connections`` (the gateway runs
        in this process; its metrics port is not served here)."""
        text = generate_latest().decode()
        for row in text.splitlines():
            name, _, value = row.rpartition(" ")
            if name == sample:
                return float(value)
        return None

    async def consuming(self) -> None:
        async def connected() -> bool:
            return await self.metric("gateway_live_events_connected") == 1.0

        await eventually(connected, timeout=30, what="the live-events consumer connected")


LiveGatewayFactory = Callable[..., AbstractAsyncContextManager[LiveGateway]]


@pytest.fixture
def live_gateway(
    make_settings: Callable[..., Settings], serve_app: Callable[..., Any]
) -> LiveGatewayFactory:
    @asynccontextmanager
    async def build(**overrides: Any) -> AsyncIterator[LiveGateway]:
        app = create_app(make_settings(**overrides))
        async with (
            app.router.lifespan_context(app),
            serve_app(app, free_port(), ws="auto") as url,
            httpx.AsyncClient(base_url=url, timeout=10) as http,
        ):
            yield LiveGateway(url, http)

    return build


def fast_reconnect(url: str) -> str:
    """The robust connection's pause before reconnecting (aio-pika's URL parameter)."""
    return f"{url}?reconnect_interval=0.5"


# -- the dashboard stand-in -------------------------------------------------------------------


@dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]


@dataclass
class JobsDashboard:
    """Answers ``GET /api/jobs/{id}``: 200 for ``allowed``, 500 for ``broken``, else 404."""

    allowed: set[str] = field(default_factory=set)
    broken: set[str] = field(default_factory=set)
    seen: list[Seen] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        path = scope["path"]
        if path != "/health":
            self.seen.append(
                Seen(
                    method=scope["method"],
                    path=path,
                    query=scope["query_string"].decode(),
                    headers={k.decode(): v.decode() for k, v in scope["headers"]},
                )
            )
        match = re.fullmatch(r"/api/jobs/([^/]+)", path)
        job_id = match.group(1) if match else ""
        status = 200 if job_id in self.allowed else 500 if job_id in self.broken else 404
        if path == "/health":
            status = 200
        body = orjson.dumps({"id": job_id} if status == 200 else {"error": "not_found"})
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
async def dashboard(serve_app: Callable[..., Any]) -> AsyncIterator[tuple[JobsDashboard, str]]:
    app = JobsDashboard()
    async with serve_app(app, free_port()) as url:
        yield app, url


# -- the scheduler's side: publishing to jobs.events ------------------------------------------


@pytest.fixture
async def events(rabbit_url: str) -> AsyncIterator[AbstractExchange]:
    connection = await aio_pika.connect_robust(
        rabbit_url, client_properties={"connection_name": "test-publisher"}
    )
    channel = await connection.channel()
    topology = await declare_topology(channel)
    yield topology.events
    await connection.close()


async def publish(exchange: AbstractExchange, message: Message) -> None:
    routing_key = JOB_CHANGES if isinstance(message, JobChanges) else JOB_LOGS_LIVE
    await exchange.publish(
        aio_pika.Message(message.to_json(), content_type="application/json"), routing_key
    )


def change(owner: str, job_id: uuid.UUID | None = None, reason: str = "dispatched") -> JobChange:
    return JobChange(
        job_id=job_id or uuid.uuid4(),
        attempt=1,
        from_status=JobStatus.PENDING,
        to_status=JobStatus.QUEUED,
        reason=reason,
        job_type="email",
        submitted_by=owner,
        at=AT,
    )


def lines(*items: tuple[uuid.UUID, str]) -> JobLogTail:
    return JobLogTail(
        lines=[
            JobLogLine(
                job_id=job, attempt=1, worker_id="worker-1", level="info", message=text, at=AT
            )
            for job, text in items
        ]
    )


# -- the client's side ------------------------------------------------------------------------


async def receive(ws: ClientConnection, *, within: float = 10.0) -> dict[str, Any]:
    async with asyncio.timeout(within):
        frame: dict[str, Any] = orjson.loads(await ws.recv())
    return frame


async def end_of(ws: ClientConnection, *, within: float = 15.0) -> tuple[int, str] | None:
    """Read until the connection ends: the server's close code and reason, or None when it
    was dropped without a close frame reaching the client."""
    async with asyncio.timeout(within):
        try:
            while True:
                await ws.recv()
        except ConnectionClosed as closed:
            return None if closed.rcvd is None else (closed.rcvd.code, closed.rcvd.reason)


async def close_of(ws: ClientConnection, *, within: float = 15.0) -> tuple[int, str]:
    """Read until the server closes; its close code and reason."""
    async with asyncio.timeout(within):
        try:
            while True:
                await ws.recv()
        except ConnectionClosed as closed:
            assert closed.rcvd is not None, "closed without a close frame from the server"
            return closed.rcvd.code, closed.rcvd.reason


async def send(ws: ClientConnection, body: dict[str, Any]) -> None:
    await ws.send(orjson.dumps(body).decode())


async def marker(ws: ClientConnection, exchange: AbstractExchange, owner: str = USER) -> None:
    """Publish a change for ``owner`` and read up to it: everything published before it has been
    through the gateway, and no other frame came first."""
    job_id = uuid.uuid4()
    await publish(exchange, JobChanges(changes=[change(owner, job_id, reason="marker")]))
    frame = await receive(ws)
    assert frame["type"] == "job.changes", frame
    assert [c["jobId"] for c in frame["changes"]] == [str(job_id)], frame


# -- authentication ---------------------------------------------------------------------------


async def test_a_missing_invalid_expired_or_refresh_token_is_closed_with_4401(
    live_gateway: LiveGatewayFactory,
) -> None:
    identity = Identity(user_id=str(uuid.uuid4()), email=USER, role="user")
    refused = {
        "no token": (None, "missing token"),
        "empty token": ("", "missing token"),
        "garbage": ("not-a-jwt", "invalid token"),
        "other secret": (
            issue_token(
                identity, keys=replace(TEST_KEYS, secret="x" * 40), ttl=timedelta(minutes=5)
            ),
            "invalid token",
        ),
        "expired": (
            issue_token(identity, keys=TEST_KEYS, ttl=timedelta(seconds=-5)),
            "token expired",
        ),
        "refresh": (
            issue_token(identity, keys=TEST_KEYS, ttl=timedelta(days=1), token_type="refresh"),
            "invalid token",
        ),
    }
    async with live_gateway() as gateway:
        for case, (token, reason) in refused.items():
            async with connect(gateway.ws_url(token)) as ws:
                assert await close_of(ws) == (4401, reason), case
        assert await gateway.metric('gateway_ws_closed_total{code="4401"}') == len(refused)
        assert await gateway.metric("gateway_ws_connections") == 0.0
        assert (await gateway.http.get("/health")).status_code == 200


async def test_hello_then_4401_when_the_token_expires_while_connected(
    live_gateway: LiveGatewayFactory,
) -> None:
    identity = Identity(user_id=str(uuid.uuid4()), email=USER, role="user")
    async with live_gateway() as gateway:
        # issued once the gateway is up (its start can outlast a short token on a busy machine)
        token = issue_token(identity, keys=TEST_KEYS, ttl=timedelta(seconds=4))
        async with connect(gateway.ws_url(token)) as ws:
            assert await receive(ws) == {"type": "hello", "user": {"email": USER, "role": "user"}}
            assert await gateway.metric("gateway_ws_connections") == 1.0
            assert await close_of(ws, within=15) == (4401, "token expired")


# -- visibility -------------------------------------------------------------------------------


async def test_a_user_sees_only_their_own_changes_and_an_admin_sees_all(
    live_gateway: LiveGatewayFactory, rabbit_url: str, events: AbstractExchange
) -> None:
    async with live_gateway(amqp_url=rabbit_url) as gateway:
        user_token = await gateway.login(USER, "user123")
        admin_token = await gateway.login("admin@test.com", "admin123")
        await gateway.consuming()
        async with (
            connect(gateway.ws_url(user_token)) as user,
            connect(gateway.ws_url(admin_token)) as admin,
        ):
            assert await receive(user) == {
                "type": "hello",
                "user": {"email": USER, "role": "user"},
            }
            assert await receive(admin) == {
                "type": "hello",
                "user": {"email": "admin@test.com", "role": "admin"},
            }
            theirs = change("someone@else.io")
            await publish(events, JobChanges(changes=[theirs]))  # nothing for the user
            mine = change("USER@Test.com")  # owners compare case-insensitively
            other = change("someone@else.io")
            await publish(events, JobChanges(changes=[mine, other]))

            assert await receive(user) == {
                "type": "job.changes",
                "changes": [
                    {
                        "jobId": str(mine.job_id),
                        "attempt": 1,
                        "fromStatus": "pending",
                        "toStatus": "queued",
                        "reason": "dispatched",
                        "jobType": "email",
                        "at": "2030-01-02T03:04:05Z",
                        "projectId": str(personal_project_id(USER)),
                    }
                ],
            }
            first, second = await receive(admin), await receive(admin)
            assert [(c["jobId"], c["submittedBy"]) for c in first["changes"]] == [
                (str(theirs.job_id), "someone@else.io")
            ]
            assert [(c["jobId"], c["submittedBy"]) for c in second["changes"]] == [
                (str(mine.job_id), "USER@Test.com"),
                (str(other.job_id), "someone@else.io"),
            ]
            assert await gateway.metric("gateway_ws_connections") == 2.0
            assert await gateway.metric('gateway_ws_frames_sent_total{type="job.changes"}')
            assert await gateway.metric('gateway_live_events_received_total{type="job.changes"}')


async def test_a_projects_connections_hear_its_changes_and_never_another_projects(
    live_gateway: LiveGatewayFactory, rabbit_url: str, events: AbstractExchange
) -> None:
    """Two projects' changes published at once, interleaved and mixed in messages: Alice (the
    owner of Acme's web project) and Bob (a viewer there) hear web's, whoever submitted them,
    and none of Carol's; a connection naming the project hears it only; one naming a project
    the user may not see is closed with 4400."""
    async with live_gateway(amqp_url=rabbit_url) as gateway:
        alice = await user(gateway.http, "alice@acme.example.com")
        bob = await user(gateway.http, "bob@acme.example.com")
        carol = await user(gateway.http, "carol@other.example.com")
        acme = ok(
            await gateway.http.post("/api/organizations", json={"name": "Acme"}, headers=alice), 201
        )
        members = f"/api/organizations/{acme['id']}/members"
        ok(
            await gateway.http.post(
                members, json={"email": "bob@acme.example.com", "role": "viewer"}, headers=alice
            ),
            201,
        )
        web = ok(
            await gateway.http.post(
                "/api/projects", json={"orgId": acme["id"], "name": "web"}, headers=alice
            ),
            201,
        )
        await gateway.consuming()

        def token(headers: dict[str, str]) -> str:
            return headers["Authorization"].removeprefix("Bearer ")

        urls = {
            "alice": gateway.ws_url(token(alice)),
            "bob": gateway.ws_url(token(bob)),
            "bob_web": gateway.ws_url(token(bob)) + f"&projectId={quote('acme/web')}",
            "carol": gateway.ws_url(token(carol)),
        }
        refused_url = gateway.ws_url(token(carol)) + f"&projectId={web['id']}"
        async with connect(refused_url) as stranger:
            assert (await close_of(stranger))[0] == 4400
        async with (
            connect(urls["alice"]) as a,
            connect(urls["bob"]) as b,
            connect(urls["bob_web"]) as bw,
            connect(urls["carol"]) as c,
        ):
            sockets = {"alice": a, "bob": b, "bob_web": bw, "carol": c}
            for ws in sockets.values():
                assert (await receive(ws))["type"] == "hello"
            web_id = uuid.UUID(web["id"])
            in_web: list[str] = []
            carols: list[str] = []

            def submitted(by: str, project: uuid.UUID | None, into: list[str]) -> JobChange:
                made = change(by).model_copy(update={"project_id": project})
                into.append(str(made.job_id))
                return made

            async def flood(turn: int) -> None:
                colleague = "bob@acme.example.com" if turn % 2 else "alice@acme.example.com"
                mixed = [
                    submitted("alice@acme.example.com", web_id, in_web),
                    submitted("carol@other.example.com", None, carols),
                    submitted(colleague, web_id, in_web),
                ]
                await publish(events, JobChanges(changes=mixed))

            await asyncio.gather(*(flood(turn) for turn in range(10)))
            end = submitted("alice@acme.example.com", web_id, [])
            last = submitted("carol@other.example.com", None, [])
            await publish(events, JobChanges(changes=[end, last]))

            async def heard(ws: ClientConnection, until: uuid.UUID) -> list[str]:
                seen: list[str] = []
                while str(until) not in seen:
                    frame = await receive(ws)
                    assert frame["type"] == "job.changes", frame
                    seen += [c["jobId"] for c in frame["changes"]]
                return seen

            for name in ("alice", "bob", "bob_web"):
                got = await heard(sockets[name], end.job_id)
                assert sorted(got) == sorted([*in_web, str(end.job_id)]), name
            got = await heard(sockets["carol"], last.job_id)
            assert sorted(got) == sorted([*carols, str(last.job_id)])


# -- log lines and subscriptions --------------------------------------------------------------


async def test_log_lines_only_after_a_subscribe_the_dashboard_allowed_until_unsubscribed(
    live_gateway: LiveGatewayFactory,
    rabbit_url: str,
    events: AbstractExchange,
    dashboard: tuple[JobsDashboard, str],
) -> None:
    stand_in, dashboard_url = dashboard
    job_a, job_b, job_c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    stand_in.allowed.add(str(job_a))  # job_b: 404, as the dashboard answers for another's job
    async with live_gateway(amqp_url=rabbit_url, dashboard_url=dashboard_url) as gateway:
        user_token = await gateway.login(USER, "user123")
        admin_token = await gateway.login("admin@test.com", "admin123")
        await gateway.consuming()
        async with connect(gateway.ws_url(user_token)) as ws:
            assert (await receive(ws))["type"] == "hello"
            await publish(events, lines((job_a, "before the subscribe")))
            await marker(ws, events)  # the line went through, and was not sent

            await send(ws, {"type": "subscribe", "jobId": str(job_a)})
            assert await receive(ws) == {"type": "subscribed", "jobId": str(job_a)}
            await send(ws, {"type": "subscribe", "jobId": str(job_b)})
            assert await receive(ws) == {
                "type": "error",
                "error": "not_found",
                "message": "job not found",
                "jobId": str(job_b),
            }

            await publish(events, lines((job_b, "b-1"), (job_a, "a-1"), (job_c, "c-1")))
            assert await receive(ws) == {
                "type": "job.logs",
                "lines": [
                    {
                        "jobId": str(job_a),
                        "attempt": 1,
                        "level": "info",
                        "message": "a-1",
                        "at": "2030-01-02T03:04:05Z",
                    }
                ],
            }

            await send(ws, {"type": "unsubscribe", "jobId": str(job_a)})
            assert await receive(ws) == {"type": "unsubscribed", "jobId": str(job_a)}
            await publish(events, lines((job_a, "after the unsubscribe")))
            await marker(ws, events)  # the line went through, and was not sent

        # The dashboard was asked exactly as GET /api/jobs/{id} through the gateway asks it.
        assert [(s.method, s.path, s.query) for s in stand_in.seen] == [
            ("GET", f"/api/jobs/{job_a}", ""),
            ("GET", f"/api/jobs/{job_b}", ""),
        ]
        for seen in stand_in.seen:
            assert seen.headers["x-user-email"] == USER
            assert seen.headers["x-user-role"] == "user"
            assert seen.headers["x-user-id"]
            assert seen.headers["x-internal-token"] == TEST_INTERNAL_TOKEN
            assert seen.headers["x-request-id"]
            assert "authorization" not in seen.headers
            assert user_token not in str(seen.headers)

        async with connect(gateway.ws_url(admin_token)) as ws:
            assert (await receive(ws))["type"] == "hello"
            await send(ws, {"type": "subscribe", "jobId": str(job_a)})
            assert await receive(ws) == {"type": "subscribed", "jobId": str(job_a)}
            await publish(events, lines((job_a, "a-2")))
            (line,) = (await receive(ws))["lines"]
            assert (line["message"], line["workerId"]) == ("a-2", "worker-1")
        assert stand_in.seen[-1].headers["x-user-role"] == "admin"


async def test_bad_client_frames_get_an_error_frame_and_the_connection_stays_open(
    live_gateway: LiveGatewayFactory, dashboard: tuple[JobsDashboard, str]
) -> None:
    stand_in, dashboard_url = dashboard
    allowed_1, allowed_2, broken = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    stand_in.allowed |= {str(allowed_1), str(allowed_2)}
    stand_in.broken.add(str(broken))
    async with (
        live_gateway(
            dashboard_url=dashboard_url, ws_max_subscriptions=1, ws_max_message_bytes=200
        ) as gateway,
        connect(gateway.ws_url(await gateway.login(USER, "user123"))) as ws,
    ):
        assert (await receive(ws))["type"] == "hello"

        async def answer(frame: str | bytes) -> dict[str, Any]:
            await ws.send(frame)
            return await receive(ws)

        for frame, message, job_id in [
            ("{not json", "frame is not JSON", None),
            ('{"type": "dance", "jobId": "j-1"}', "unknown frame type", "j-1"),
            ('{"type": "subscribe", "jobId": "j-1"}', "jobId must be a UUID", "j-1"),
            (
                '{"type": "subscribe", "pad": "' + "x" * 300 + '"}',
                "frame larger than 200 bytes",
                None,
            ),
            (b'{"type": "subscribe"}', "text frames only", None),
        ]:
            assert await answer(frame) == {
                "type": "error",
                "error": "bad_request",
                "message": message,
                "jobId": job_id,
            }, frame

        reply = await answer(orjson.dumps({"type": "subscribe", "jobId": str(broken)}).decode())
        assert (reply["error"], reply["jobId"]) == ("service_unavailable", str(broken))
        reply = await answer(orjson.dumps({"type": "subscribe", "jobId": str(allowed_1)}).decode())
        assert reply == {"type": "subscribed", "jobId": str(allowed_1)}
        reply = await answer(orjson.dumps({"type": "subscribe", "jobId": str(allowed_2)}).decode())
        assert (reply["error"], reply["jobId"]) == ("too_many_subscriptions", str(allowed_2))
        reply = await answer(orjson.dumps({"type": "subscribe", "jobId": str(allowed_1)}).decode())
        assert reply == {"type": "subscribed", "jobId": str(allowed_1)}
        # The limit was checked before asking the dashboard; a repeated subscribe is not asked.
        assert [s.path for s in stand_in.seen] == [
            f"/api/jobs/{broken}",
            f"/api/jobs/{allowed_1}",
        ]


# -- slow clients -----------------------------------------------------------------------------


@pytest.mark.serial  # a slow reader's backlog against the server's bounds: not beside others
@pytest.mark.timeout(240)  # about 50 MB of frames go to the fast client
async def test_a_client_that_stops_reading_is_closed_with_1013_and_the_others_carry_on(
    live_gateway: LiveGatewayFactory, rabbit_url: str, events: AbstractExchange
) -> None:
    # The close frame waits behind the slow client's backlog until the client reads it: on a
    # loaded machine, reading megabytes took longer than the default 10 s (CI: reset instead).
    async with live_gateway(
        amqp_url=rabbit_url, ws_send_queue_size=2, ws_close_timeout_seconds=60
    ) as gateway:
        token = await gateway.login("admin@test.com", "admin123")
        await gateway.consuming()
        slow_closed = await gateway.metric("gateway_ws_slow_closed_total") or 0.0

        # A client that reads nothing: a small socket buffer, one frame buffered, never read.
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(gateway.url.rsplit(":", 1)[1])))
        # No client keepalive pings (browsers send none): under this flood on a loaded machine
        # the gateway's pong waits behind the frames, and the client would close on its own.
        async with (
            connect(
                gateway.ws_url(token), sock=sock, max_queue=1, max_size=None, ping_interval=None
            ) as slow,
            connect(gateway.ws_url(token), max_size=None, ping_interval=None) as fast,
        ):
            assert (await receive(slow))["type"] == "hello"
            assert (await receive(fast))["type"] == "hello"
            fast_frames: list[str] = []

            async def read_fast() -> None:
                async for frame in fast:
                    assert isinstance(frame, str)
                    fast_frames.append(frame)

            reader = asyncio.create_task(read_fast())
            bulky = [change("someone@else.io", reason="x" * 200) for _ in range(400)]

            async def slow_one_closed() -> bool:
                value = await gateway.metric("gateway_ws_slow_closed_total")
                return (value or 0.0) > slow_closed

            for sent in range(1, 501):
                await publish(events, JobChanges(changes=bulky))
                if sent % 10 == 0 and await slow_one_closed():
                    break
            # The gateway may still be working through the frames published (about 50 MB for
            # the fast client) when the loop ends: on a loaded machine that takes a while.
            await eventually(slow_one_closed, timeout=90, what="the slow client closed")
            # The close frame waits behind the megabytes the slow client has not read; a client
            # that cannot read them before the server's close handshake gives up (on a loaded
            # machine) sees the connection dropped instead: either way it ends, and a close
            # frame it does get says 1013.
            ended = await end_of(slow, within=90)
            assert ended in (None, (1013, "too slow: reconnect and catch up over HTTP")), ended

            last = uuid.uuid4()
            await publish(events, JobChanges(changes=[change(USER, last, reason="last")]))

            async def fast_got_the_last() -> bool:
                return bool(fast_frames) and str(last) in fast_frames[-1]

            await eventually(fast_got_the_last, timeout=30, what="the fast client's last frame")
            assert fast.state.name == "OPEN"
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        assert await gateway.metric('gateway_ws_closed_total{code="1013"}')


# -- the broker going away --------------------------------------------------------------------


async def gateway_connections(rabbit_server: RabbitServer, vhost: str) -> list[dict[str, Any]]:
    listed = await rabbit_server.management("GET", f"/vhosts/{quote(vhost, safe='')}/connections")
    return [
        c
        for c in listed.json()
        if c.get("client_properties", {}).get("connection_name") == GATEWAY_CONNECTION
    ]


async def live_bindings(rabbit_server: RabbitServer, vhost: str) -> list[str]:
    """The routing keys the replica's live-events queue is bound to on jobs.events."""
    v = quote(vhost, safe="")
    queues = (await rabbit_server.management("GET", f"/queues/{v}")).json()
    (queue,) = [q for q in queues if q["name"].startswith("jobs.live.gateway.")]
    name = quote(queue["name"], safe="")
    bindings = (await rabbit_server.management("GET", f"/queues/{v}/{name}/bindings")).json()
    return sorted(b["routing_key"] for b in bindings if b["source"] == "jobs.events")


async def assert_the_replicas_queue(
    rabbit_server: RabbitServer, vhost: str, *, max_length: int
) -> None:
    """One exclusive, auto-delete, bounded queue of the replica's, bound to jobs.events for
    the status changes its one open connection listens to."""
    v = quote(vhost, safe="")
    queues = (await rabbit_server.management("GET", f"/queues/{v}")).json()
    (queue,) = [q for q in queues if q["name"].startswith("jobs.live.gateway.")]
    assert (queue["exclusive"], queue["auto_delete"], queue["durable"]) == (True, True, False)
    assert queue["arguments"] == {"x-max-length": max_length, "x-overflow": "drop-head"}
    assert await live_bindings(rabbit_server, vhost) == ["job.changes"]


async def test_the_queue_is_bound_only_while_someone_listens(
    live_gateway: LiveGatewayFactory,
    rabbit_server: RabbitServer,
    rabbit_vhost: str,
    rabbit_url: str,
    events: AbstractExchange,
    dashboard: tuple[JobsDashboard, str],
) -> None:
    """With no one connected the broker drops live events at the exchange: none reaches the
    replica to be discarded there. A connection's hello comes once ``job.changes`` is bound, a
    ``subscribed`` once ``job.logs`` is; both are unbound after the last listener left."""
    stand_in, dashboard_url = dashboard
    job = uuid.uuid4()
    stand_in.allowed.add(str(job))
    unheard = 'gateway_live_events_received_total{type="unheard"}'
    async with live_gateway(
        amqp_url=rabbit_url, dashboard_url=dashboard_url, live_unbind_after_seconds=0.2
    ) as gateway:
        token = await gateway.login(USER, "user123")
        await gateway.consuming()
        assert await live_bindings(rabbit_server, rabbit_vhost) == []
        before = await gateway.metric(unheard) or 0.0
        for _ in range(3):
            await publish(events, JobChanges(changes=[change(USER)]))
            await publish(events, lines((job, "no one follows it")))

        async with connect(gateway.ws_url(token)) as ws:
            assert (await receive(ws))["type"] == "hello"
            assert await live_bindings(rabbit_server, rabbit_vhost) == ["job.changes"]
            await marker(ws, events)  # the events above never reached the replica
            assert (await gateway.metric(unheard) or 0.0) == before
            await send(ws, {"type": "subscribe", "jobId": str(job)})
            assert await receive(ws) == {"type": "subscribed", "jobId": str(job)}
            await publish(events, lines((job, "followed")))
            assert [line["message"] for line in (await receive(ws))["lines"]] == ["followed"]
            assert await live_bindings(rabbit_server, rabbit_vhost) == [
                "job.changes",
                "job.logs",
            ]

        async def unbound() -> bool:
            return await live_bindings(rabbit_server, rabbit_vhost) == []

        await eventually(unbound, timeout=10, what="both keys unbound after the last listener")
        await publish(events, JobChanges(changes=[change(USER)]))
        await asyncio.sleep(0.3)
        assert (await gateway.metric(unheard) or 0.0) == before


async def test_events_flow_again_after_the_broker_closed_the_gateways_connection(
    live_gateway: LiveGatewayFactory,
    rabbit_server: RabbitServer,
    rabbit_vhost: str,
    rabbit_url: str,
    events: AbstractExchange,
) -> None:
    async with live_gateway(
        amqp_url=fast_reconnect(rabbit_url), live_queue_max_length=123
    ) as gateway:
        token = await gateway.login(USER, "user123")
        await gateway.consuming()
        async with connect(gateway.ws_url(token)) as ws:
            assert (await receive(ws))["type"] == "hello"
            await marker(ws, events)
            await assert_the_replicas_queue(rabbit_server, rabbit_vhost, max_length=123)

            async def listed() -> list[dict[str, Any]]:
                return await gateway_connections(rabbit_server, rabbit_vhost)

            (before,) = await eventually(listed, what="the gateway's connection listed")
            await rabbit_server.management(
                "DELETE", f"/connections/{quote(before['name'], safe='')}"
            )

            async def flowing_again() -> bool:
                job_id = uuid.uuid4()
                await publish(events, JobChanges(changes=[change(USER, job_id)]))
                try:
                    frame = await receive(ws, within=0.5)
                except TimeoutError:
                    return False  # published while the gateway had no queue: lost, as promised
                return str(job_id) in orjson.dumps(frame).decode()

            await eventually(flowing_again, timeout=30, interval=0.1, what="events again")
            await marker(ws, events)
            (after,) = await eventually(listed, what="the gateway's new connection listed")
            assert after["name"] != before["name"]
            await assert_the_replicas_queue(rabbit_server, rabbit_vhost, max_length=123)
            assert await gateway.metric("gateway_live_events_connected") == 1.0
            assert (await gateway.http.get("/health")).status_code == 200


async def test_http_and_websockets_work_without_the_broker_and_events_start_once_it_answers(
    live_gateway: LiveGatewayFactory, rabbit_server: RabbitServer
) -> None:
    vhost = f"test-{uuid.uuid4().hex[:12]}"  # does not exist yet: the broker refuses the gateway
    try:
        async with live_gateway(amqp_url=rabbit_server.url_for(vhost)) as gateway:
            token = await gateway.login(USER, "user123")  # HTTP works without the broker
            ready = await gateway.http.get("/ready")
            assert set(ready.json()["checks"]) == {"database", "submission", "dashboard"}
            async with connect(gateway.ws_url(token)) as ws:
                assert (await receive(ws))["type"] == "hello"
                assert await gateway.metric("gateway_live_events_connected") == 0.0

                await rabbit_server.management("PUT", f"/vhosts/{quote(vhost, safe='')}")
                await rabbit_server.management(
                    "PUT",
                    f"/permissions/{quote(vhost, safe='')}/guest",
                    json={"configure": ".*", "write": ".*", "read": ".*"},
                )
                await gateway.consuming()
                connection = await aio_pika.connect_robust(rabbit_server.url_for(vhost))
                try:
                    exchange = await (await connection.channel()).get_exchange("jobs.events")
                    await marker(ws, exchange)
                finally:
                    await connection.close()
    finally:
        await rabbit_server.delete_vhost(vhost)
