"""What ``wait``, ``tail``, ``logs(follow=True)`` and listings decide, shared by both clients.

``wait`` follows the live events socket (``GET /ws/events?token=...``): after its ``hello``
the client reads each job once over HTTP (events published before the socket was bound are
not replayed), then takes the ``job.changes`` frames as they come. Live events are best
effort (docs/gateway.md, "Best effort"), so every :data:`SAFETY_POLL_SECONDS` without news the
unfinished jobs are read again over HTTP. When the socket cannot be opened or keeps closing,
the wait goes on by polling ``GET /api/jobs/{id}`` alone, with a growing pause
(:class:`PollPause`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from websockets.exceptions import InvalidHandshake, InvalidURI

from jobs_client.models import TERMINAL_STATUSES, BatchSubmitted, Job, JobChange, Submitted

#: Re-read unfinished jobs over HTTP this often while the socket is quiet.
SAFETY_POLL_SECONDS = 10.0
#: Give up the socket (poll instead) after this many failed connections in a row.
MAX_SOCKET_FAILURES = 3
#: WebSocket close code of the gateway for a missing, invalid or expired token.
CLOSE_TOKEN_REFUSED = 4401
#: Failures to open the socket that make a wait poll instead (refused, no WebSocket there).
SOCKET_ERRORS = (OSError, InvalidHandshake, InvalidURI, TimeoutError)
#: ``logs(follow=True)`` reads on this long after the job finished (lines can trail the result).
FOLLOW_GRACE_SECONDS = 1.0


def events_url(base_url: str, token: str) -> str:
    """The live events socket of a gateway at ``base_url`` (http -> ws, https -> wss)."""
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    path = parts.path.rstrip("/") + "/ws/events"
    return urlunsplit((scheme, parts.netloc, path, f"token={quote(token, safe='')}", ""))


def bounded(seconds: float, remaining: float | None) -> float:
    """``seconds``, but never past a deadline ``remaining`` seconds away (None: no deadline)."""
    return seconds if remaining is None else max(0.0, min(seconds, remaining))


@dataclass(frozen=True)
class Frame:
    type: str
    changes: list[JobChange]
    body: dict[str, Any]


def parse_frame(data: str | bytes) -> Frame:
    """One server frame; unknown types come through with no changes (the client ignores
    them, so a gateway that adds frame types does not break it)."""
    body = json.loads(data)
    if not isinstance(body, dict):
        return Frame("unknown", [], {})
    kind = str(body.get("type", "unknown"))
    changes: list[JobChange] = []
    if kind == "job.changes":
        changes = [JobChange.from_json(c) for c in body.get("changes") or []]
    return Frame(kind, changes, body)


@dataclass(frozen=True)
class WaitProgress:
    """Handed to ``wait(on_progress=...)`` whenever a job's status changes."""

    statuses: dict[str, str | None]  # None: accepted, not recorded by the scheduler yet

    @property
    def total(self) -> int:
        return len(self.statuses)

    @property
    def finished(self) -> int:
        return sum(1 for s in self.statuses.values() if s in TERMINAL_STATUSES)

    def count(self, status: str) -> int:
        return sum(1 for s in self.statuses.values() if s == status)


# What ``wait`` takes for a job: its id, or what ``submit`` returned (a handle is one).
JobRef = str | Submitted
# Several jobs: a list of those, or what ``submit_batch`` (or a chain, a group) returned.
JobRefs = Sequence[JobRef] | BatchSubmitted


def wanted_ids(job_ids: JobRef | JobRefs) -> tuple[list[str], bool]:
    """The ids a wait follows, and whether one job was given (not a list)."""
    if isinstance(job_ids, str | Submitted):
        return [_id_of(job_ids)], True
    if isinstance(job_ids, BatchSubmitted):
        return list(job_ids.job_ids), False
    return [_id_of(ref) for ref in job_ids], False


def _id_of(ref: JobRef) -> str:
    return ref.job_id if isinstance(ref, Submitted) else str(ref)


class WaitState:
    """The jobs a wait follows: the last status seen of each, and the final detail of those
    that finished."""

    def __init__(
        self, ids: Iterable[str], on_progress: Callable[[WaitProgress], None] | None = None
    ) -> None:
        self.ids = list(dict.fromkeys(str(i) for i in ids))
        if not self.ids:
            raise ValueError("wait needs at least one job id")
        self.statuses: dict[str, str | None] = dict.fromkeys(self.ids)
        self.finished: dict[str, Job] = {}
        self.accepted: set[str] = set()  # seen in the submission's records
        self._on_progress = on_progress

    def _changed(self) -> None:
        if self._on_progress is not None:
            self._on_progress(WaitProgress(dict(self.statuses)))

    def pending(self) -> list[str]:
        return [i for i in self.ids if i not in self.finished]

    def done(self) -> bool:
        return len(self.finished) == len(self.ids)

    def observe(self, job: Job) -> None:
        """A job read over HTTP."""
        if job.id not in self.statuses:
            return
        before = self.statuses[job.id]
        self.statuses[job.id] = job.status
        if job.finished:
            self.finished[job.id] = job
        if before != job.status:
            self._changed()

    def terminal_changes(self, changes: Iterable[JobChange]) -> list[str]:
        """Apply pushed changes; the ids that reached a terminal state (to be read once)."""
        reached: list[str] = []
        before = dict(self.statuses)
        for change in changes:
            if change.job_id not in self.statuses or change.job_id in self.finished:
                continue
            self.statuses[change.job_id] = change.to_status
            if change.to_status in TERMINAL_STATUSES and change.job_id not in reached:
                reached.append(change.job_id)
        if self.statuses != before:
            self._changed()
        return reached

    def timeout_message(self, timeout: float | None) -> str:
        left = {i: self.statuses[i] for i in self.pending()}
        shown = ", ".join(f"{i} ({s or 'not recorded yet'})" for i, s in list(left.items())[:5])
        more = f" and {len(left) - 5} more" if len(left) > 5 else ""
        return f"{len(left)} job(s) unfinished after {timeout} s: {shown}{more}"

    def pending_statuses(self) -> Mapping[str, str | None]:
        return {i: self.statuses[i] for i in self.pending()}


class PollPause:
    """The pause between polls while no socket is open: 0.2 s, growing by half up to 2 s,
    back to the start when something moved."""

    def __init__(self, first: float = 0.2, ceiling: float = 2.0) -> None:
        self.first = first
        self.ceiling = ceiling
        self.current = first

    def next(self) -> float:
        pause = self.current
        self.current = min(self.ceiling, self.current * 1.5)
        return pause

    def reset(self) -> None:
        self.current = self.first


class SeenIds:
    """Drops jobs a listing already yielded: pages are by offset, so a job created while a
    newest-first listing is walked pushes older ones down into the next page again."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def fresh(self, job_id: str) -> bool:
        if job_id in self._seen:
            return False
        self._seen.add(job_id)
        return True
