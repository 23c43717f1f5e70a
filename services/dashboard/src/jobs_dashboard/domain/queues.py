"""Queue depth per priority: what waits for a worker, as the job store and the broker see it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from jobs_common.api_models import CamelModel

PriorityLabel = Literal["low", "medium", "high"]
LABELS: dict[int, PriorityLabel] = {1: "low", 2: "medium", 3: "high"}


class QueueDepth(CamelModel):
    queue: str = Field(description="The ready queue, e.g. jobs.ready.high.")
    named_queue: str = Field(
        default="default",
        description="The named queue of the job types it holds (docs/sdk.md, routing).",
    )
    priority: int = Field(ge=1, le=3)
    label: PriorityLabel
    queued_jobs: int = Field(description="Jobs dispatched to this queue and not started yet.")
    oldest_queued_at: datetime | None = Field(description="When the oldest of them was queued.")
    oldest_age_seconds: float | None = Field(description="Its age now (the database clock).")
    broker_ready: int | None = Field(
        description="Messages ready in the broker's queue; null when the broker did not answer."
    )
    consumers: int | None = Field(description="Workers consuming it; null as above.")


class QueueList(CamelModel):
    items: list[QueueDepth] = Field(
        description="The default queue first, then named queues with queued jobs, by name; "
        "high priority first within each."
    )
