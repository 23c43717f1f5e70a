"""The console's charts over a chosen range (docs/dashboard.md, "Charts"): which rollup grain
and window width each range reads, so every chart has a bounded number of points, and how a
window's sums become its figures (pure)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal

from pydantic import Field

from jobs_common.api_models import CamelModel

EPOCH = datetime.fromisoformat("2000-01-01T00:00:00+00:00")


class ChartRange(StrEnum):
    M15 = "15m"
    H1 = "1h"
    H6 = "6h"
    H24 = "24h"
    D7 = "7d"


Grain = Literal["minute", "hour"]


@dataclass(frozen=True)
class RangePlan:
    span: timedelta
    step: timedelta
    grain: Grain

    @property
    def points(self) -> int:
        return self.span // self.step


# 15, 60, 72, 96 and 168 points; minute rows are kept a day, hour rows eight days.
PLANS: dict[ChartRange, RangePlan] = {
    ChartRange.M15: RangePlan(timedelta(minutes=15), timedelta(minutes=1), "minute"),
    ChartRange.H1: RangePlan(timedelta(hours=1), timedelta(minutes=1), "minute"),
    ChartRange.H6: RangePlan(timedelta(hours=6), timedelta(minutes=5), "minute"),
    ChartRange.H24: RangePlan(timedelta(hours=24), timedelta(minutes=15), "minute"),
    ChartRange.D7: RangePlan(timedelta(days=7), timedelta(hours=1), "hour"),
}


def first_window(plan: RangePlan, now: datetime) -> datetime:
    """The start of the first of ``plan.points`` windows, the last one holding ``now``
    (windows aligned on the epoch, as ``date_bin`` aligns them)."""
    last = EPOCH + ((now - EPOCH) // plan.step) * plan.step
    return last - (plan.points - 1) * plan.step


class PriorityFigures(CamelModel):
    high: float
    medium: float
    low: float


class ChartPoint(CamelModel):
    start: datetime = Field(description="The window's start; it lasts `bucketSeconds`.")
    succeeded: int = Field(description="Jobs that finished in the window and succeeded.")
    dead: int = Field(description="Jobs that finished in the window as dead (failed for good).")
    cancelled: int
    waiting: PriorityFigures | None = Field(
        description="Jobs waiting (unfinished, not running) by priority, the mean of the "
        "window's minute samples; null when no scheduler sampled the window."
    )
    running: float | None = Field(description="Jobs running, mean as above.")
    longest_wait_seconds: PriorityFigures | None = Field(
        description="By priority, the longest a queued job had waited at a sample in the window."
    )
    busy_slots: float | None = Field(
        description="Admins, whole platform: the live workers' slots running a job, the mean of "
        "the window's samples; null otherwise or when unsampled."
    )
    slots: float | None = Field(description="The live workers' slots, as above.")


class ChartSeries(CamelModel):
    range: ChartRange
    bucket_seconds: int = Field(description="Each window's width: 60, 300, 900 or 3600.")
    first: datetime = Field(description="The first window's start (UTC).")
    points: list[ChartPoint] = Field(description="Oldest first; the last window holds now.")
    project_id: uuid.UUID | None = Field(description="The one queue's project, or null.")
    queue: str | None = Field(description="The one queue charted, or null: every visible one.")
    grafana_url: str | None = Field(
        description="The Grafana dashboard of these figures, where one is configured."
    )
    rabbitmq_console_url: str | None = Field(
        description="Admins: the RabbitMQ management console, where one is configured."
    )


PRIORITIES = {3: "high", 2: "medium", 1: "low"}


@dataclass
class WindowSums:
    """One window's sums over its rollup rows."""

    minutes_sampled: int = 0
    worker_minutes: int = 0
    busy_slots: int = 0
    slots: int = 0
    waiting: dict[int, int] = field(default_factory=dict)
    running: int = 0
    longest_wait: dict[int, float] = field(default_factory=dict)
    finished: dict[str, int] = field(default_factory=dict)

    def add_queue_row(
        self, *, priority: int, waiting: int, running: int, longest_wait: float
    ) -> None:
        self.waiting[priority] = self.waiting.get(priority, 0) + waiting
        self.running += running
        self.longest_wait[priority] = max(self.longest_wait.get(priority, 0.0), longest_wait)

    def add_finished(self, status: str, jobs: int) -> None:
        self.finished[status] = self.finished.get(status, 0) + jobs


def chart_point(start: datetime, sums: WindowSums, *, fleet: bool) -> ChartPoint:
    """A window's figures: depths as means over its sampled minutes, waits as the longest,
    finishes as counted; the workers' only for ``fleet`` (an admin's whole-platform view)."""
    sampled = sums.minutes_sampled
    waiting = wait = None
    if sampled:
        waiting = PriorityFigures(
            **{name: sums.waiting.get(p, 0) / sampled for p, name in PRIORITIES.items()}
        )
        wait = PriorityFigures(
            **{name: sums.longest_wait.get(p, 0.0) for p, name in PRIORITIES.items()}
        )
    workers = fleet and sums.worker_minutes > 0
    return ChartPoint(
        start=start,
        succeeded=sums.finished.get("succeeded", 0),
        dead=sums.finished.get("dead", 0),
        cancelled=sums.finished.get("cancelled", 0),
        waiting=waiting,
        running=sums.running / sampled if sampled else None,
        longest_wait_seconds=wait,
        busy_slots=sums.busy_slots / sums.worker_minutes if workers else None,
        slots=sums.slots / sums.worker_minutes if workers else None,
    )
