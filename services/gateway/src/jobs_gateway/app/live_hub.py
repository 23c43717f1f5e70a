"""The process's live-events hub: from the broker consumer to each WebSocket connection.

One :class:`LiveHub` per process. Each connection is a :class:`Listener` with a bounded outbox;
the hub offers it frames without ever waiting. A listener whose outbox is full is told to close
with 1013 (try again later) instead of holding more: its client reconnects and catches up over
HTTP. Frames are built per audience (:mod:`jobs_gateway.domain.live`), so a message reaches a
thousand admins as one serialization and a thousand queue puts.

The hub indexes its listeners by audience (admins, each project, each subscribed job), so
a message costs work only for the connections it goes to.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from jobs_common.auth import Identity
from jobs_common.contracts import JobChanges, JobLogTail
from jobs_common.tenancy import personal_project_id
from jobs_common.topology import JOB_LOGS_LIVE
from jobs_gateway.adapters.metrics import WS_SLOW_CLOSED
from jobs_gateway.domain.live import (
    CLOSE_GOING_AWAY,
    CLOSE_TRY_AGAIN_LATER,
    ChangeFrames,
    Frame,
    LiveLimits,
    LogFrames,
    SubscriptionLimit,
)

log = logging.getLogger(__name__)


def listened_projects(identity: Identity) -> tuple[str, ...]:
    if identity.grants is not None:
        return tuple(project for project, _ in identity.grants)
    return (str(personal_project_id(identity.email)),)


class Listener:
    """One connection's side of the hub: identity, subscriptions, bounded outbox, close order."""

    def __init__(self, identity: Identity, *, queue_size: int, max_subscriptions: int) -> None:
        self.identity = identity
        # The platform admin without a named project hears everything; anyone else the
        # projects of its grants (a caller without grants: its personal project).
        self.admin = identity.is_admin and identity.grants is None
        self.projects = listened_projects(identity)
        self.max_subscriptions = max_subscriptions
        self.outbox: asyncio.Queue[Frame] = asyncio.Queue(maxsize=queue_size)
        self.subscriptions: set[uuid.UUID] = set()
        self.close_code: int | None = None
        self.close_reason = ""
        self.closing = asyncio.Event()

    def offer(self, frame: Frame) -> bool:
        """Queue ``frame`` without waiting; a full outbox closes the connection (1013)."""
        if self.close_code is not None:
            return False
        try:
            self.outbox.put_nowait(frame)
        except asyncio.QueueFull:
            WS_SLOW_CLOSED.inc()
            log.warning(
                "live connection too slow; closing",
                extra={
                    "action": "ws_slow_close",
                    "user_id": self.identity.user_id,
                    "queued": self.outbox.qsize(),
                },
            )
            self.close(CLOSE_TRY_AGAIN_LATER, "too slow: reconnect and catch up over HTTP")
            return False
        return True

    def close(self, code: int, reason: str) -> None:
        """Ask the connection to close with ``code`` (the first order wins)."""
        if self.close_code is None:
            self.close_code, self.close_reason = code, reason
            self.closing.set()

    def check_room_for(self, job_id: uuid.UUID) -> None:
        """Raise :class:`SubscriptionLimit` if subscribing to ``job_id`` would pass the limit."""
        if job_id not in self.subscriptions and len(self.subscriptions) >= self.max_subscriptions:
            raise SubscriptionLimit(f"at most {self.max_subscriptions} subscriptions")


class LiveHub:
    def __init__(self, limits: LiveLimits) -> None:
        self.limits = limits
        self._admins: set[Listener] = set()
        self._by_project: dict[str, set[Listener]] = {}
        self._listeners: set[Listener] = set()
        self._by_job: dict[uuid.UUID, set[Listener]] = {}

    def __len__(self) -> int:
        return len(self._admins) + len(self._listeners)

    def wants(self, routing_key: str) -> bool:
        """Whether an event of this kind could reach anyone now: with no one connected (or no
        one following a job's lines) the consumer drops it without parsing it."""
        if routing_key == JOB_LOGS_LIVE:
            return bool(self._by_job)
        return bool(self._admins or self._listeners)

    def join(self, identity: Identity) -> Listener:
        listener = Listener(
            identity,
            queue_size=self.limits.send_queue_size,
            max_subscriptions=self.limits.max_subscriptions,
        )
        if listener.admin:
            self._admins.add(listener)
            return listener
        self._listeners.add(listener)
        for project in listener.projects:
            self._by_project.setdefault(project, set()).add(listener)
        return listener

    def leave(self, listener: Listener) -> None:
        for job_id in tuple(listener.subscriptions):
            self.unsubscribe(listener, job_id)
        if listener.admin:
            self._admins.discard(listener)
            return
        self._listeners.discard(listener)
        for project in listener.projects:
            group = self._by_project.get(project)
            if group is not None:
                group.discard(listener)
                if not group:
                    del self._by_project[project]

    def subscribe(self, listener: Listener, job_id: uuid.UUID) -> None:
        listener.check_room_for(job_id)
        listener.subscriptions.add(job_id)
        self._by_job.setdefault(job_id, set()).add(listener)

    def unsubscribe(self, listener: Listener, job_id: uuid.UUID) -> bool:
        if job_id not in listener.subscriptions:
            return False
        listener.subscriptions.discard(job_id)
        group = self._by_job.get(job_id)
        if group is not None:
            group.discard(listener)
            if not group:
                del self._by_job[job_id]
        return True

    def publish_changes(self, message: JobChanges) -> int:
        """Offer each listener the changes it may see; the number of frames offered."""
        frames = ChangeFrames(message)
        offered = 0
        if self._admins:
            admin_frame = frames.for_admins()
            for listener in tuple(self._admins):
                offered += listener.offer(admin_frame)
        for project in frames.projects:
            group = self._by_project.get(project)
            if not group:
                continue
            project_frame = frames.for_project(project)
            if project_frame is None:
                continue
            for listener in tuple(group):
                offered += listener.offer(project_frame)
        return offered

    def publish_logs(self, message: JobLogTail) -> int:
        """Offer each listener subscribed to a job of the message that job's lines."""
        frames = LogFrames(message)
        targets: set[Listener] = set()
        for job_id in frames.job_ids:
            targets.update(self._by_job.get(job_id, ()))
        offered = 0
        for listener in targets:
            log_frame = frames.for_subscriber(
                admin=listener.admin, subscriptions=listener.subscriptions
            )
            if log_frame is not None:
                offered += listener.offer(log_frame)
        return offered

    def close_all(self, code: int = CLOSE_GOING_AWAY, reason: str = "server shutting down") -> None:
        for listener in tuple(self._admins):
            listener.close(code, reason)
        for listener in tuple(self._listeners):
            listener.close(code, reason)
