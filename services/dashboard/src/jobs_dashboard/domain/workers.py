"""The worker registry (pure): a worker's status from its last heartbeat, judged against how
far the scheduler has read heartbeats, never against the wall clock.

Heartbeats wait in ``jobs.heartbeat`` until the scheduler applies them to ``workers``. A
scheduler that lags or is paused applies none, so every ``last_heartbeat_at`` ages by the wall
clock although the workers keep reporting. The scheduler records per replica and queue the
send time of the latest read tick it applied (``read_horizons``, its leases are judged the
same way): every heartbeat sent before the heartbeat queue's horizon has been applied. A worker
is dead only when its last heartbeat is more than ``dead_after`` older than that horizon; with
no live reader of the queue there is no horizon and no worker is judged (``unknown``).

What a worker runs now is read from the job store (``jobs`` running with its ``worker_id``),
not from its heartbeat: the store is what the scheduler acts on, and it stays right when the
worker crashes (its attempts are listed until the reaper moves them on). Its processed and
failed counts are the worker's own, as its latest heartbeat reported them (``quiet`` too).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from jobs_common.api_models import CamelModel

WorkerStatus = Literal["alive", "quiet", "stopping", "dead", "unknown"]
STATUS_ORDER: dict[str, int] = {"alive": 0, "quiet": 1, "stopping": 2, "unknown": 3, "dead": 4}
WorkerCommand = Literal["quiet", "stop"]
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside ``text`` by value: worker-2 before worker-10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.casefold())
        for part in _DIGITS.split(text)
        if part
    )


def heartbeat_horizon(live_horizons: Iterable[datetime]) -> datetime | None:
    """How far every live replica has read the heartbeat queue: the smallest of their
    horizons. None when no replica is reading it (just started, stopped or paused for long)."""
    return min(live_horizons, default=None)


def horizon_is_live(*, updated_at: datetime, now: datetime, stale_after: timedelta) -> bool:
    """The scheduler's staleness rule: a replica that has not moved its horizon for
    ``stale_after`` died or froze, and holds nothing back (nor vouches for anything)."""
    return updated_at > now - stale_after


def worker_status(
    *,
    last_heartbeat_at: datetime,
    stopping: bool,
    horizon: datetime | None,
    dead_after: timedelta,
    quiet: bool = False,
) -> WorkerStatus:
    """unknown without a horizon; dead once the scheduler has read ``dead_after`` past the
    worker's last heartbeat without another one; else stopping (draining), quiet (takes no
    new job) or alive."""
    if horizon is None:
        return "unknown"
    if horizon - last_heartbeat_at > dead_after:
        return "dead"
    if stopping:
        return "stopping"
    return "quiet" if quiet else "alive"


def command_refused(status: WorkerStatus) -> str | None:
    """Why an admin's quiet or stop cannot reach a worker in ``status`` (None: it can). A
    dead worker reads no control queue; one stopping is already past both commands'
    effect. Quiet twice, or stop after quiet, is accepted (the worker ignores a repeat)."""
    if status == "dead":
        return "the worker is dead: it reads no commands"
    return None


def sorted_workers(views: Iterable[WorkerView]) -> list[WorkerView]:
    """Live first (alive, quiet, stopping, unknown, dead), then by id, numbers by value."""
    return sorted(views, key=lambda w: (STATUS_ORDER[w.status], natural_key(w.id)))


class RunningJob(CamelModel):
    job_id: uuid.UUID
    job_type: str
    attempt: int
    started_at: datetime | None = Field(description="When this attempt started on the worker.")
    progress: float | None = Field(description="The handler's latest ctx.progress percent.")


def listing_reference(
    *, horizon: datetime | None, newest_heartbeat: datetime | None, now: datetime
) -> datetime:
    """The moment "dead for N minutes" is counted back from: the horizon; without one, the
    newest heartbeat applied (about when the scheduler stopped reading); else now."""
    if horizon is not None:
        return horizon
    return newest_heartbeat if newest_heartbeat is not None else now


def shown_since(reference: datetime, dead_after: timedelta, include_dead_minutes: int) -> datetime:
    """Oldest last heartbeat still listed: live workers plus those dead for at most N minutes."""
    return reference - dead_after - timedelta(minutes=include_dead_minutes)


class WorkerView(CamelModel):
    id: str
    hostname: str
    pid: int
    version: str
    queues: list[str]
    concurrency: int
    active_jobs: int
    started_at: datetime
    last_heartbeat_at: datetime
    status: WorkerStatus = Field(
        description="alive, quiet (an admin's quiet: takes no new job, finishes its own), "
        "stopping (draining: an admin's stop or a shutdown), dead (no heartbeat for "
        "DASHBOARD_WORKER_DEAD_AFTER_SECONDS before heartbeatHorizon), or unknown (not judged: "
        "the scheduler is not reading heartbeats, heartbeatHorizon is null)."
    )
    quiet: bool = Field(description="Takes no new job (an admin's quiet or stop took effect).")
    processed: int = Field(
        description="Attempts this worker process ran to an outcome since it started."
    )
    failed: int = Field(description="Of those, the attempts that failed.")
    running: list[RunningJob] = Field(
        description="The attempts the job store records as running on this worker, oldest "
        "first (a dead worker's until the reaper moves them on)."
    )


class WorkerCommandAccepted(CamelModel):
    worker_id: str
    command: WorkerCommand
    requested_by: str
    requested_at: datetime


class WorkerList(CamelModel):
    items: list[WorkerView] = Field(
        description="alive first, then quiet, stopping, unknown, dead; by id within each, "
        "numbers by value (worker-2 before worker-10)."
    )
    counts: dict[str, int] = Field(
        description="Listed workers by status: alive, quiet, stopping, dead, unknown."
    )
    heartbeat_horizon: datetime | None = Field(
        description="How far the scheduler has read the heartbeat queue (the smallest read "
        "horizon of its live replicas): every heartbeat sent before it has been applied, and "
        "workers are judged against it, not against the wall clock. Null when no replica is "
        "reading heartbeats: then no worker is judged (status unknown).",
    )
