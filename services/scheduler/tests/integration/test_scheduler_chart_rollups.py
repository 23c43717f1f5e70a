"""The console's chart rollups (issue 35, point 4; docs/dashboard.md, "Charts"): the replica
that takes a minute writes each queue's depth, running jobs and longest wait by priority, the
live workers' slots, the previous minute's finishes by how they ended, and once an hour the
hour before summed."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import (
    CHART_PLATFORM,
    jobs,
    queue_hours,
    queue_minutes,
    queue_sample_hours,
    queue_sample_minutes,
    workers,
)
from jobs_scheduler.adapters.queue_samples import sample_queues

pytestmark = pytest.mark.integration

PLATFORM = uuid.UUID(CHART_PLATFORM)

TEAM = uuid.uuid4()


def job(status: str, priority: int, **times: Any) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "type": "echo",
        "priority": priority,
        "payload": {},
        "submitted_by": "u@test.com",
        "status": status,
        "max_attempts": 3,
        "attempt_limit": 3,
        "timeout_seconds": 30,
        "project_id": TEAM,
        "queue": "emails",
        "queued_at": None,
        "finished_at": None,
        **times,
    }


def worker(
    worker_id: str, *, seen: datetime, active: int, stopping: bool = False
) -> dict[str, Any]:
    return {
        "id": worker_id,
        "hostname": "h",
        "pid": 1,
        "version": "1",
        "queues": ["default"],
        "concurrency": 4,
        "active_jobs": active,
        "started_at": seen,
        "last_heartbeat_at": seen,
        "stopping": stopping,
    }


async def clear_of_a_minute_end() -> None:
    """The rows below are placed relative to the minute the sample then runs in."""
    second = datetime.now(UTC).second + datetime.now(UTC).microsecond / 1e6
    if second > 55:
        await asyncio.sleep(60.5 - second)


async def test_a_taken_minute_writes_depths_waits_workers_and_the_last_minute_s_finishes(
    db: AsyncEngine,
) -> None:
    await clear_of_a_minute_end()
    async with db.begin() as connection:
        now: datetime = await connection.scalar(text("SELECT now()"))
        minute = now.replace(second=0, microsecond=0)
        last_minute = minute - timedelta(seconds=30)
        await connection.execute(
            insert(jobs),
            [
                job("queued", 3, queued_at=now - timedelta(seconds=40)),
                job("queued", 3, queued_at=now - timedelta(seconds=5)),
                job("running", 3),
                job("scheduled", 1),
                job("succeeded", 3, finished_at=last_minute),
                job("succeeded", 3, finished_at=last_minute),
                job("dead", 3, finished_at=last_minute),
                job("cancelled", 1, finished_at=last_minute),
                job("succeeded", 3, finished_at=minute - timedelta(minutes=5)),  # not last minute
            ],
        )
        await connection.execute(
            insert(workers),
            [
                worker("alive", seen=now, active=3),
                worker("stopping", seen=now, active=1, stopping=True),
                worker("gone", seen=now - timedelta(minutes=5), active=2),
            ],
        )
    async with db.begin() as connection:
        assert await sample_queues(connection) == 1
    async with db.connect() as connection:
        every = (await connection.execute(select(queue_minutes))).all()
        rows = {(r.minute, r.priority): r for r in every if r.queue == "emails"}
        totals = {(r.minute, r.project_id, r.priority): r for r in every if r.queue == "*"}
        sampled = (
            await connection.execute(
                select(queue_sample_minutes).where(queue_sample_minutes.c.minute == minute)
            )
        ).one()
    high = rows[(minute, 3)]
    assert (high.waiting, high.running, high.succeeded, high.dead) == (2, 1, 0, 0)
    assert 39 <= high.oldest_wait_seconds < 45
    low = rows[(minute, 1)]
    assert (low.waiting, low.running, low.oldest_wait_seconds) == (1, 0, 0)
    before = minute - timedelta(minutes=1)
    assert (rows[(before, 3)].succeeded, rows[(before, 3)].dead, rows[(before, 3)].cancelled) == (
        2,
        1,
        0,
    )
    assert rows[(before, 1)].cancelled == 1
    assert len(rows) == 4
    # the project's totals and the platform's: the same figures here (one queue, one project)
    for project in (TEAM, PLATFORM):
        mine = totals[(minute, project, 3)]
        assert (mine.waiting, mine.running, mine.oldest_wait_seconds) == (
            2,
            1,
            high.oldest_wait_seconds,
        )
        assert (totals[(before, project, 3)].succeeded, totals[(before, project, 3)].dead) == (2, 1)
        assert totals[(before, project, 1)].cancelled == 1
    assert len(totals) == 8
    assert (sampled.workers, sampled.busy_slots, sampled.slots) == (1, 3, 4)


async def test_the_first_minute_of_an_hour_sums_the_hour_before(db: AsyncEngine) -> None:
    async with db.connect() as connection:
        hour: datetime = await connection.scalar(
            text("SELECT date_trunc('hour', now()) - interval '1 hour'")
        )
    minutes = [hour + timedelta(minutes=m) for m in (0, 1, 2)]
    row = {"project_id": TEAM, "queue": "emails", "priority": 2, "running": 1}
    async with db.begin() as connection:
        await connection.execute(
            insert(queue_sample_minutes),
            [
                {"minute": minutes[0], "workers": 2, "busy_slots": 3, "slots": 8},
                {"minute": minutes[1], "workers": 2, "busy_slots": 5, "slots": 8},
                {"minute": minutes[2], "workers": None, "busy_slots": None, "slots": None},
            ],
        )
        await connection.execute(
            insert(queue_minutes),
            [
                {**row, "minute": minutes[0], "waiting": 4, "oldest_wait_seconds": 12.0,
                 "succeeded": 10, "dead": 1, "cancelled": 0},
                {**row, "minute": minutes[2], "waiting": 2, "oldest_wait_seconds": 30.0,
                 "succeeded": 5, "dead": 0, "cancelled": 2},
            ],
        )  # fmt: skip
    async with db.begin() as connection:
        assert await sample_queues(connection) == 1
    async with db.connect() as connection:
        summed = (await connection.execute(select(queue_hours))).one()
        counted = (
            await connection.execute(
                select(queue_sample_hours).where(queue_sample_hours.c.hour == hour)
            )
        ).one()
    assert summed.hour == hour
    assert (summed.waiting, summed.running, summed.oldest_wait_seconds) == (6, 2, 30.0)
    assert (summed.succeeded, summed.dead, summed.cancelled) == (15, 1, 2)
    assert (counted.minutes, counted.worker_minutes) == (3, 2)
    assert (counted.workers, counted.busy_slots, counted.slots) == (4, 8, 16)
