"""Each queue's jobs waiting and running once a minute (issue 33, point 5; docs/flow-control.md,
"Depth and the last hour"): whichever replicas sample a minute, it is sampled once, from one
snapshot; a queue with nothing unfinished writes no row; samples older than a day go; the
running scheduler's sweep takes the minute it runs in."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import jobs, queue_sample_minutes, queue_samples
from jobs_scheduler.adapters.queue_samples import sample_queues
from jobs_scheduler.service import Runtime

from .conftest import eventually

pytestmark = pytest.mark.integration

TEAM, OTHER = uuid.uuid4(), uuid.uuid4()


async def insert_jobs(db: AsyncEngine, *specs: tuple[uuid.UUID, str, str]) -> None:
    rows = [
        {
            "id": uuid.uuid4(),
            "type": "echo",
            "priority": 2,
            "payload": {},
            "submitted_by": "u@test.com",
            "status": status,
            "max_attempts": 3,
            "attempt_limit": 3,
            "timeout_seconds": 30,
            "project_id": project,
            "queue": queue,
        }
        for project, queue, status in specs
    ]
    async with db.begin() as connection:
        await connection.execute(insert(jobs), rows)


async def samples(db: AsyncEngine) -> list[Any]:
    async with db.connect() as connection:
        statement = select(queue_samples).order_by(queue_samples.c.queue)
        return list((await connection.execute(statement)).all())


async def clear_of_a_minute_end() -> None:
    """Two transactions a moment apart must start in one minute (``now()`` is a
    transaction's start): begin at least 3 s before the minute ends."""
    second = datetime.now(UTC).second + datetime.now(UTC).microsecond / 1e6
    if second > 57:
        await asyncio.sleep(60.5 - second)


async def test_two_replicas_in_one_minute_sample_it_once_from_one_snapshot(
    db: AsyncEngine,
) -> None:
    await insert_jobs(
        db,
        (TEAM, "emails", "queued"),
        (TEAM, "emails", "scheduled"),
        (TEAM, "emails", "running"),
        (TEAM, "emails", "succeeded"),
        (OTHER, "default", "blocked"),
        (TEAM, "idle", "succeeded"),  # nothing unfinished: no row
    )
    await clear_of_a_minute_end()
    async with db.connect() as first, db.connect() as second:
        await first.begin()
        await second.begin()
        assert await sample_queues(first) == 1
        # the other replica's pass waits for the first one's minute, then finds it taken
        other = asyncio.create_task(sample_queues(second))
        await asyncio.sleep(0.2)
        assert not other.done()
        await first.commit()
        assert await other == 0
        await second.commit()
    minute = (await samples(db))[0].minute
    assert minute.second == 0 and minute.microsecond == 0
    assert [(r.project_id, r.queue, r.minute, r.waiting, r.running) for r in await samples(db)] == [
        (OTHER, "default", minute, 1, 0),
        (TEAM, "emails", minute, 2, 1),
    ]

    # a later pass in the same minute changes nothing, whatever the jobs did meanwhile
    await insert_jobs(db, (TEAM, "emails", "queued"), (TEAM, "idle", "queued"))
    async with db.begin() as connection:
        same_minute = await connection.scalar(text("SELECT date_trunc('minute', now())"))
        taken = await sample_queues(connection)
    if same_minute == minute:
        assert taken == 0
        assert len(await samples(db)) == 2
    async with db.connect() as connection:
        minutes = await connection.scalar(select(func.count()).select_from(queue_sample_minutes))
    assert minutes == (1 if same_minute == minute else 2)


async def test_the_minute_s_sampler_deletes_what_is_older_than_a_day(db: AsyncEngine) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    old, recent = now - timedelta(hours=25), now - timedelta(hours=23)
    async with db.begin() as connection:
        await connection.execute(
            insert(queue_samples),
            [
                {"project_id": TEAM, "queue": "emails", "minute": m, "waiting": 3, "running": 1}
                for m in (old, recent)
            ],
        )
        await connection.execute(
            insert(queue_sample_minutes), [{"minute": old}, {"minute": recent}]
        )
    async with db.begin() as connection:
        assert await sample_queues(connection) == 1
    assert [r.minute for r in await samples(db)] == [recent]
    async with db.connect() as connection:
        kept = (await connection.execute(select(queue_sample_minutes.c.minute))).scalars().all()
    assert old not in kept and recent in kept and len(kept) == 2


async def test_the_running_scheduler_samples_the_minute_it_runs_in(
    db: AsyncEngine, scheduler: Runtime
) -> None:
    async def taken() -> Any:
        async with db.connect() as connection:
            return await connection.scalar(
                select(queue_sample_minutes.c.minute).where(
                    queue_sample_minutes.c.minute
                    >= text("date_trunc('minute', now()) - '1 minute'::interval")
                )
            )

    await eventually(taken, what="the scheduler's queue sample of this minute")
