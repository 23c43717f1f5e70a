"""The missed-fire policy of cron schedules (fire times: ``jobs_common.cron``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from jobs_common.cron import next_fire_after


@dataclass(frozen=True)
class Firing:
    fire_time: datetime  # the fire time this run stands for
    next_fire_at: datetime  # when the schedule is due next
    missed: int  # fire times skipped by the catch-up policy


def due_firing(cron: str, timezone: str, due_at: datetime, now: datetime) -> Firing:
    """Fire a schedule that was due at ``due_at``.

    Missed fire times after downtime are not replayed one by one: the schedule fires once,
    for the most recent fire time that has passed, and continues with the first fire time
    after ``now`` ("fire once, not a storm").
    """
    fire_time = due_at
    missed = 0
    candidate = next_fire_after(cron, timezone, fire_time)
    while candidate <= now:
        fire_time = candidate
        missed += 1
        candidate = next_fire_after(cron, timezone, fire_time)
    return Firing(fire_time=fire_time, next_fire_at=candidate, missed=missed)
