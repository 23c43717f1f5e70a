"""The worker registry (pure): a worker's status from its last heartbeat, judged against how
far the scheduler has read heartbeats, never against the wall clock.

Heartbeats wait in ``jobs.heartbeat`` until the scheduler applies them to ``workers``. A
scheduler that lags or is paused applies none, so every ``last_heartbeat_at`` ages by the wall
clock although the workers keep reporting. The scheduler records per replica and queue the
send time of the latest read tick it applied (``read_horizons``, its leases are judged the
same way): every heartbeat sent before the heartbeat queue's horizon has been applied. A worker
is dead only when its last heartbeat is more than ``dead_after`` older than that horizon; with
no live reader of the queue there is no horizon and no worker is judged (``unknown``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from jobs_common.api_models import CamelModel

WorkerStatus = Literal["alive", "stopping", "dead", "unknown"]
STATUS_ORDER: dict[str, int] = {"alive": 0, "stopping": 1, "unknown": 2, "dead": 3}


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
) -> WorkerStatus:
    """unknown without a horizon; dead once the scheduler has read ``dead_after`` past the
    worker's last heartbeat without another one; else stopping (draining) or alive."""
    if horizon is None:
        return "unknown"
    if horizon - last_heartbeat_at > dead_after:
        return "dead"
    return "stopping" if stopping else "alive"


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
        description="alive, stopping (draining), dead (no heartbeat for "
        "DASHBOARD_WORKER_DEAD_AFTER_SECONDS before heartbeatHorizon), or unknown (not judged: "
        "the scheduler is not reading heartbeats, heartbeatHorizon is null)."
    )


class WorkerList(CamelModel):
    items: list[WorkerView] = Field(description="alive first, then stopping, unknown, dead.")
    counts: dict[str, int] = Field(
        description="Listed workers by status: alive, stopping, dead, unknown."
    )
    heartbeat_horizon: datetime | None = Field(
        description="How far the scheduler has read the heartbeat queue (the smallest read "
        "horizon of its live replicas): every heartbeat sent before it has been applied, and "
        "workers are judged against it, not against the wall clock. Null when no replica is "
        "reading heartbeats: then no worker is judged (status unknown).",
    )
