"""The worker registry (pure): a worker's status from its last heartbeat."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from jobs_common.api_models import CamelModel

WorkerStatus = Literal["alive", "stopping", "dead"]
STATUS_ORDER: dict[str, int] = {"alive": 0, "stopping": 1, "dead": 2}


def worker_status(
    *, last_heartbeat_at: datetime, stopping: bool, now: datetime, dead_after: timedelta
) -> WorkerStatus:
    """dead once no heartbeat came for ``dead_after``; else stopping (draining) or alive."""
    if now - last_heartbeat_at > dead_after:
        return "dead"
    return "stopping" if stopping else "alive"


def shown_since(now: datetime, dead_after: timedelta, include_dead_minutes: int) -> datetime:
    """Oldest last heartbeat still listed: live workers plus those dead for at most N minutes."""
    return now - dead_after - timedelta(minutes=include_dead_minutes)


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
    status: WorkerStatus


class WorkerList(CamelModel):
    items: list[WorkerView] = Field(description="alive first, then stopping, then dead.")
    counts: dict[str, int] = Field(description="Listed workers by status.")
