"""A queue's last hour (docs/flow-control.md, "Depth and the last hour"): its jobs waiting and
running per minute, as the scheduler's queue samples sweep sampled them, oldest first. A
minute sampled without a row of the queue had nothing of it unfinished (zeros); a minute
nobody sampled (no scheduler ran, or before the samples began) is null."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Set
from datetime import datetime, timedelta

from pydantic import Field

from jobs_common.api_models import CamelModel, Page

DEFAULT_MINUTES = 60
MOST_MINUTES = 1440  # the samples are kept a day

Series = list[int | None]


class QueueHistory(CamelModel):
    queue_id: uuid.UUID = Field(description="The queue's id, as `GET /api/queues` gives it.")
    project_id: uuid.UUID
    name: str
    waiting: Series = Field(
        description="Per minute, oldest first: its unfinished jobs not running when the minute "
        "was sampled; null for a minute nobody sampled (no scheduler ran)."
    )
    running: Series = Field(
        description="Per minute, oldest first: its jobs running; null as above."
    )


class QueueHistoryPage(Page[QueueHistory]):
    first_minute: datetime = Field(
        description="The minute of every series' first point (UTC, on the minute); point i is "
        "i minutes later, the last one the current minute (the database's clock)."
    )
    minutes: int = Field(description="Points per series.")


def window(now_minute: datetime, minutes: int) -> datetime:
    """The first of the ``minutes`` minutes ending with ``now_minute``."""
    return now_minute - timedelta(minutes=minutes - 1)


def series(
    first: datetime,
    minutes: int,
    sampled: Set[datetime],
    found: Mapping[datetime, tuple[int, int]],
) -> tuple[Series, Series]:
    """(waiting, running) per minute from ``first``: a queue's sample where ``found`` has
    one, zeros where the minute was ``sampled`` without it, else null."""
    waiting: Series = []
    running: Series = []
    for i in range(minutes):
        minute = first + timedelta(minutes=i)
        sample = found.get(minute, (0, 0) if minute in sampled else None)
        waiting.append(None if sample is None else sample[0])
        running.append(None if sample is None else sample[1])
    return waiting, running
