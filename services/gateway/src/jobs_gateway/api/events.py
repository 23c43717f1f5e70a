"""GET /ws/events: live job changes and log lines over a WebSocket (protocol: docs/gateway.md).

The access token comes as the ``token`` query parameter (browsers cannot set headers on a
WebSocket) and is verified like a bearer token. The handshake is always accepted first, then a
refused token closes the socket at once with 4401: a close before the accept would reach the
client as a failed handshake (HTTP 403) without any code. The connection closes with 4401 too
when its token expires.

Per connection: one task reads the client's frames (subscribe / unsubscribe), one writes the
listener's outbox to the socket; the first of them to end, or a close order (token expired,
too slow, shutdown), ends both.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid

from fastapi import APIRouter, WebSocket
from prometheus_client import Counter

from jobs_common.auth import Identity
from jobs_common.errors import NotFound, PlatformError, Unauthorized, UpstreamUnavailable
from jobs_common.topology import JOB_CHANGES, JOB_LOGS_LIVE
from jobs_gateway.adapters.live import LiveEventsConsumer
from jobs_gateway.adapters.metrics import WS_CLOSED, WS_CONNECTIONS, WS_FRAMES_SENT
from jobs_gateway.adapters.upstream import Upstreams
from jobs_gateway.app.accounts import Accounts
from jobs_gateway.app.live_hub import Listener, LiveHub
from jobs_gateway.app.project_scope import ProjectScopes
from jobs_gateway.domain import live
from jobs_gateway.domain.headers import upstream_request_headers
from jobs_gateway.domain.project_scope import PROJECT_QUERY
from jobs_gateway.domain.routing import resolve

log = logging.getLogger(__name__)

router = APIRouter(tags=["live"])

# How long a close frame may wait for a client that stopped reading.

_SENT: dict[str, Counter] = {}


def _count_sent(frame: live.Frame) -> None:
    counter = _SENT.get(frame.type)
    if counter is None:
        counter = _SENT[frame.type] = WS_FRAMES_SENT.labels(frame.type)
    counter.inc()


@router.websocket("/ws/events", name="live_events")
async def live_events(websocket: WebSocket) -> None:
    accounts: Accounts = websocket.app.state.accounts
    hub: LiveHub = websocket.app.state.live_hub
    token = websocket.query_params.get("token")
    await websocket.accept()
    scopes: ProjectScopes = websocket.app.state.project_scopes
    try:
        if not token:
            raise Unauthorized("missing token")
        identity, expires = accounts.tokens.verify_access_until(token)
        # The projects whose changes it hears: the one ?projectId= names, else every project
        # of the user's organizations (docs/tenancy.md), read once at the connect.
        identity = await scopes.of_user(identity, websocket.query_params.get(PROJECT_QUERY))
    except PlatformError as exc:
        code = live.CLOSE_UNAUTHORIZED if isinstance(exc, Unauthorized) else live.CLOSE_REFUSED
        await _close(websocket, code, exc.message, timeout=hub.limits.close_timeout_seconds)
        return
    session = LiveSession(websocket, hub=hub, identity=identity)
    WS_CONNECTIONS.inc()
    try:
        await session.run(expires=expires)
    finally:
        WS_CONNECTIONS.dec()


class LiveSession:
    def __init__(self, websocket: WebSocket, *, hub: LiveHub, identity: Identity) -> None:
        self.websocket = websocket
        self.hub = hub
        self.identity = identity
        self.upstreams: Upstreams = websocket.app.state.upstreams
        self.internal_token: str = websocket.app.state.internal_token
        self.live_events: LiveEventsConsumer | None = getattr(
            websocket.app.state, "live_events", None
        )
        self.listener: Listener = hub.join(identity)
        self.gone = False  # the client went away: nothing left to close

    async def run(self, *, expires: float) -> None:
        loop = asyncio.get_running_loop()
        expiry = loop.call_later(
            max(0.0, expires - time.time()),
            self.listener.close,
            live.CLOSE_UNAUTHORIZED,
            "token expired",
        )
        tasks: list[asyncio.Task[None]] = []
        try:
            await self._listen(JOB_CHANGES)  # bound before the client is told it is live
            await self._send(live.hello(self.identity))
            tasks = [
                asyncio.create_task(self._send_loop()),
                asyncio.create_task(self._receive_loop()),
                asyncio.create_task(self._closing()),
            ]
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and (exc := task.exception()) is not None:
                    log.error(
                        "live connection failed",
                        extra={"action": "ws_error", "user_id": self.identity.user_id},
                        exc_info=exc,
                    )
                    self.listener.close(live.CLOSE_INTERNAL_ERROR, "internal error")
        except Exception:
            self.gone = True  # hello could not be sent: the client is gone
        finally:
            expiry.cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.hub.leave(self.listener)
            self._idle(JOB_CHANGES)
            self._idle(JOB_LOGS_LIVE)
        if self.listener.close_code is not None and not self.gone:
            await _close(
                self.websocket,
                self.listener.close_code,
                self.listener.close_reason,
                timeout=self.hub.limits.close_timeout_seconds,
            )

    async def _closing(self) -> None:
        await self.listener.closing.wait()

    async def _send(self, frame: live.Frame) -> None:
        await self.websocket.send_text(frame.text)
        _count_sent(frame)

    async def _send_loop(self) -> None:
        outbox = self.listener.outbox
        try:
            while True:
                await self._send(await outbox.get())
        except Exception:
            self.gone = True

    async def _receive_loop(self) -> None:
        limit = self.hub.limits.max_message_bytes
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                self.gone = True
                return
            text = message.get("text")
            if text is None:
                self._reply(live.error(live.BadFrame("text frames only")))
                continue
            try:
                request = live.parse_client_frame(text, max_bytes=limit)
            except live.BadFrame as exc:
                self._reply(live.error(exc, job_id=exc.job_id))
                continue
            if isinstance(request, live.Subscribe):
                await self._subscribe(request.job_id)
            else:
                self.hub.unsubscribe(self.listener, request.job_id)
                self._idle(JOB_LOGS_LIVE)
                self._reply(live.unsubscribed(request.job_id))

    async def _subscribe(self, job_id: uuid.UUID) -> None:
        try:
            if job_id not in self.listener.subscriptions:
                self.listener.check_room_for(job_id)
                await self._authorize(job_id)
                self.hub.subscribe(self.listener, job_id)
        except PlatformError as exc:
            self._reply(live.error(exc, job_id=job_id))
            return
        await self._listen(JOB_LOGS_LIVE)
        self._reply(live.subscribed(job_id))

    async def _listen(self, routing_key: str) -> None:
        if self.live_events is not None:
            await self.live_events.listen(routing_key)

    def _idle(self, routing_key: str) -> None:
        if self.live_events is not None:
            self.live_events.idle(routing_key)

    async def _authorize(self, job_id: uuid.UUID) -> None:
        """Ask the dashboard for the job as ``GET /api/jobs/{id}`` through the gateway would:
        a 200 allows; 403/404 is ``not_found``; anything else ``service_unavailable``."""
        target = resolve("GET", f"jobs/{job_id}")
        request_id = uuid.uuid4().hex
        client = self.websocket.client
        headers = upstream_request_headers(
            self.websocket.headers.items(),
            identity=self.identity,
            internal_token=self.internal_token,
            request_id=request_id,
            client_ip=client.host if client else None,
        )
        answer = await self.upstreams.forward(
            upstream=target.upstream,
            method="GET",
            path=target.path,
            query="",
            headers=headers,
            body=b"",
            request_id=request_id,
        )
        log.debug(
            "live subscription checked",
            extra={
                "action": "ws_subscribe",
                "job_id": str(job_id),
                "status": answer.status_code,
                "request_id": request_id,
            },
        )
        if answer.status_code in (403, 404):
            raise NotFound("job not found")
        if answer.status_code != 200:
            raise UpstreamUnavailable(f"{target.upstream} answered {answer.status_code}")

    def _reply(self, frame: live.Frame) -> None:
        self.listener.offer(frame)


async def _close(websocket: WebSocket, code: int, reason: str, *, timeout: float) -> None:
    try:
        async with asyncio.timeout(timeout):
            await websocket.close(code, reason)
    except Exception:
        log.debug("live close not delivered", extra={"action": "ws_close", "code": code})
    WS_CLOSED.labels(str(code)).inc()


_TOKEN_IN_QUERY = re.compile(r"(?i)([?&]token=)[^&\s\"']*")


class RedactTokens(logging.Filter):
    """uvicorn logs each WebSocket's path with its query string: hide the token in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(
                _TOKEN_IN_QUERY.sub(r"\1[redacted]", arg) if isinstance(arg, str) else arg
                for arg in record.args
            )
        return True


_REDACT = RedactTokens()


def redact_tokens_in_server_logs() -> None:
    """Install :class:`RedactTokens` on uvicorn's logger (idempotent)."""
    server_log = logging.getLogger("uvicorn.error")
    if _REDACT not in server_log.filters:
        server_log.addFilter(_REDACT)
