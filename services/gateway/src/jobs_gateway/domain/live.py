"""Live events over a WebSocket: who sees what, the frames both ways, the close codes. Pure.

A broker message becomes at most one frame per audience, serialized once and shared by every
connection of that audience: one for the admins (every change, with ``submittedBy``), one per
project (that project's changes only, for its members: docs/tenancy.md), one per (role, set
of subscribed jobs in the message) for log lines. A member reads each change's reason as its
submitter would: naming no worker and no other person
(:func:`jobs_common.disclosure.for_owner`).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

import orjson

from jobs_common.auth import Identity
from jobs_common.contracts import JobChanges, JobLogTail
from jobs_common.disclosure import for_owner
from jobs_common.errors import BadRequest, PlatformError

# Close codes (RFC 6455 private range 4000-4999 for the application's own).
CLOSE_UNAUTHORIZED: Final = 4401  # missing, invalid, expired or refresh token; or it expired
CLOSE_REFUSED: Final = 4400  # the ?projectId= named is not the caller's (or ambiguous)
CLOSE_TRY_AGAIN_LATER: Final = 1013  # the connection did not keep up with its frames
CLOSE_GOING_AWAY: Final = 1001  # the gateway is shutting down
CLOSE_INTERNAL_ERROR: Final = 1011  # an unexpected failure on the gateway's side

# Frame types, server -> client.
HELLO: Final = "hello"
CHANGES: Final = "job.changes"
LOGS: Final = "job.logs"
SUBSCRIBED: Final = "subscribed"
UNSUBSCRIBED: Final = "unsubscribed"
ERROR: Final = "error"

# Client -> server.
SUBSCRIBE: Final = "subscribe"
UNSUBSCRIBE: Final = "unsubscribe"


class SubscriptionLimit(PlatformError):
    code = "too_many_subscriptions"
    status_code = 429


@dataclass(frozen=True, slots=True)
class LiveLimits:
    send_queue_size: int  # frames waiting for one connection before it counts as too slow
    max_subscriptions: int  # jobs whose log lines one connection follows
    max_message_bytes: int  # one client frame
    # How long a closing connection's close frame may wait behind what the client has not read
    # yet; then the connection is dropped.
    close_timeout_seconds: float = 10.0


@dataclass(frozen=True, slots=True)
class Frame:
    """One server -> client text frame, serialized once."""

    type: str
    text: str


def frame(body: dict[str, Any]) -> Frame:
    return Frame(type=str(body["type"]), text=orjson.dumps(body).decode())


def hello(identity: Identity) -> Frame:
    return frame({"type": HELLO, "user": {"email": identity.email, "role": identity.role}})


def subscribed(job_id: uuid.UUID) -> Frame:
    return frame({"type": SUBSCRIBED, "jobId": str(job_id)})


def unsubscribed(job_id: uuid.UUID) -> Frame:
    return frame({"type": UNSUBSCRIBED, "jobId": str(job_id)})


def error(exc: PlatformError, *, job_id: uuid.UUID | str | None = None) -> Frame:
    return frame(
        {
            "type": ERROR,
            "error": exc.code,
            "message": exc.message,
            "jobId": None if job_id is None else str(job_id),
        }
    )


class ChangeFrames:
    """The ``job.changes`` frames of one :class:`JobChanges` message, built on first demand."""

    def __init__(self, message: JobChanges) -> None:
        # JSON mode once per message: the same text for datetimes as the HTTP API's models.
        dumped = message.model_dump(mode="json")["changes"]
        self._changes: list[tuple[dict[str, Any], str]] = []
        self._by_project: dict[str, list[dict[str, Any]]] = {}
        for change, model in zip(dumped, message.changes, strict=True):
            public = {
                "jobId": change["job_id"],
                "attempt": change["attempt"],
                "fromStatus": change["from_status"],
                "toStatus": change["to_status"],
                "reason": change["reason"],
                "jobType": change["job_type"],
                "at": change["at"],
            }
            owner = str(change["submitted_by"])
            project = str(model.project())
            self._changes.append((public | {"projectId": project}, owner))
            # Members read the reason without the worker or the admin it may name.
            shared = public | {"projectId": project}
            shared["reason"] = for_owner(public["reason"], owner=owner)
            self._by_project.setdefault(project, []).append(shared)
        self._admin: Frame | None = None
        self._project_frames: dict[str, Frame] = {}

    @property
    def projects(self) -> Collection[str]:
        """The projects (ids as text) of the message's changes."""
        return self._by_project.keys()

    def for_admins(self) -> Frame:
        if self._admin is None:
            changes = [public | {"submittedBy": owner} for public, owner in self._changes]
            self._admin = frame({"type": CHANGES, "changes": changes})
        return self._admin

    def for_project(self, project: str) -> Frame | None:
        """The frame of ``project``'s members; None if no change is the project's."""
        cached = self._project_frames.get(project)
        if cached is None:
            changes = self._by_project.get(project)
            if not changes:
                return None
            cached = self._project_frames[project] = frame({"type": CHANGES, "changes": changes})
        return cached


class LogFrames:
    """The ``job.logs`` frames of one :class:`JobLogTail` message, one per (role, subscribed
    jobs among the message's), built on first demand. ``workerId`` only for admins."""

    def __init__(self, message: JobLogTail) -> None:
        dumped = message.model_dump(mode="json")["lines"]
        self._lines: list[tuple[uuid.UUID, dict[str, Any], str]] = []
        jobs: dict[uuid.UUID, None] = {}
        for line in dumped:
            job_id = uuid.UUID(line["job_id"])
            public = {
                "jobId": line["job_id"],
                "attempt": line["attempt"],
                "level": line["level"],
                "message": line["message"],
                "at": line["at"],
            }
            self._lines.append((job_id, public, str(line["worker_id"])))
            jobs[job_id] = None
        self.job_ids: tuple[uuid.UUID, ...] = tuple(jobs)
        self._frames: dict[tuple[bool, tuple[uuid.UUID, ...]], Frame] = {}

    def for_subscriber(self, *, admin: bool, subscriptions: Collection[uuid.UUID]) -> Frame | None:
        matched = tuple(job for job in self.job_ids if job in subscriptions)
        if not matched:
            return None
        key = (admin, matched)
        cached = self._frames.get(key)
        if cached is None:
            wanted = set(matched)
            lines = [
                public | {"workerId": worker} if admin else public
                for job, public, worker in self._lines
                if job in wanted
            ]
            cached = self._frames[key] = frame({"type": LOGS, "lines": lines})
        return cached


@dataclass(frozen=True, slots=True)
class Subscribe:
    job_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    job_id: uuid.UUID


ClientRequest = Subscribe | Unsubscribe


class BadFrame(BadRequest):
    """A client frame the gateway cannot act on; ``job_id`` is the ``jobId`` it named, if any."""

    def __init__(self, message: str, *, job_id: str | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id


def parse_client_frame(text: str, *, max_bytes: int) -> ClientRequest:
    """A client frame as a request; :class:`BadFrame` for anything else."""
    if len(text) > max_bytes or len(text.encode()) > max_bytes:
        raise BadFrame(f"frame larger than {max_bytes} bytes")
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BadFrame("frame is not JSON") from exc
    if not isinstance(data, dict):
        raise BadFrame("frame must be a JSON object")
    raw = data.get("jobId")
    named = raw[:64] if isinstance(raw, str) else None
    kind = data.get("type")
    if kind not in (SUBSCRIBE, UNSUBSCRIBE):
        raise BadFrame("unknown frame type", job_id=named)
    if not isinstance(raw, str):
        raise BadFrame("jobId (a UUID string) is required")
    try:
        job_id = uuid.UUID(raw)
    except ValueError as exc:
        raise BadFrame("jobId must be a UUID", job_id=named) from exc
    return Subscribe(job_id) if kind == SUBSCRIBE else Unsubscribe(job_id)
