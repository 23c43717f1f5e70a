"""Rollups equal a full scan: random histories of inserts, status moves, requeues and
deletes (in multi-row statements, as the scheduler and retention write) of jobs in several
projects, folded at random points by the scheduler's folder, read back through the
dashboard's rollup reads for random visibilities (owners, sets of projects), filters and
created ranges (whole hours, whole minutes, partial minutes, open ends) and compared with the
same numbers computed from every job row."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.jobstore import ROLLUPS, jobs
from jobs_dashboard.adapters.analytics import (
    CountFilter,
    count_jobs,
    finished_last_hour,
    job_series,
    runtimes,
)
from jobs_dashboard.domain.analytics import EPOCH, runtime_percentile
from jobs_dashboard.domain.query import CreatedRange, Visibility
from jobs_scheduler.adapters.rollups import fold, rebuild_rollups
from jobs_testing.stats import percentile_cont

pytestmark = pytest.mark.integration

OWNERS = ("a@test.com", "b@test.com", "c@test.com")
# Any owner's jobs in any project: an owner in several projects, a project of several owners.
PROJECTS = tuple(uuid.UUID(int=n) for n in range(1, 4))
TYPES = ("echo", "email", "report")
START_STATUSES = ("pending", "queued", "scheduled", "blocked")


@dataclass
class History:
    """Writes random job changes, one multi-row statement at a time."""

    rng: random.Random
    now: datetime

    def created(self) -> datetime:
        # within the last three hours or three days, at any second and microsecond
        hours = self.rng.choice([3, 72])
        return self.now - timedelta(seconds=self.rng.uniform(0, hours * 3600))

    async def insert_some(self, c: AsyncConnection) -> None:
        rows = []
        for _ in range(self.rng.randint(1, 25)):
            created = self.created()
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "type": self.rng.choice(TYPES),
                    "priority": self.rng.randint(1, 3),
                    "payload": {},
                    "submitted_by": self.rng.choice(OWNERS),
                    "project_id": self.rng.choice(PROJECTS),
                    "status": self.rng.choice(START_STATUSES),
                    "max_attempts": 3,
                    "attempt_limit": 3,
                    "timeout_seconds": 60,
                    "created_at": created,
                    "updated_at": created,
                }
            )
        await c.execute(insert(jobs), rows)

    async def pick(self, c: AsyncConnection, *statuses: str) -> list[Any]:
        found = (
            await c.execute(select(jobs.c.id, jobs.c.created_at).where(jobs.c.status.in_(statuses)))
        ).all()
        return self.rng.sample(found, min(len(found), self.rng.randint(1, 15)))

    async def move(self, c: AsyncConnection, rows: Sequence[Any], **values: Any) -> None:
        if rows:
            await c.execute(
                update(jobs).where(jobs.c.id.in_([r.id for r in rows])).values(**values)
            )

    async def step(self, c: AsyncConnection) -> None:
        kind = self.rng.choice(["insert", "start", "finish", "fail", "requeue", "prune", "mixed"])
        if kind == "insert":
            await self.insert_some(c)
        elif kind == "start":
            rows = await self.pick(c, "pending", "queued", "scheduled", "blocked")
            started = self.now - timedelta(seconds=self.rng.uniform(0, 7200))
            await self.move(c, rows, status="running", started_at=started)
        elif kind == "finish":
            for row in await self.pick(c, "running"):  # each its own runtime, one statement
                runtime = timedelta(milliseconds=self.rng.choice([0.3, 5, 120, 900, 40_000]))
                await c.execute(
                    update(jobs)
                    .where(jobs.c.id == row.id)
                    .values(status="succeeded", finished_at=jobs.c.started_at + runtime)
                )
        elif kind == "fail":
            rows = await self.pick(c, "running", "queued", "scheduled")
            finished = self.now - timedelta(seconds=self.rng.uniform(0, 7200))
            status = self.rng.choice(["dead", "cancelled"])
            await self.move(c, rows, status=status, finished_at=finished)
        elif kind == "requeue":  # a dead job runs again: no longer finished
            await self.move(c, await self.pick(c, "dead"), status="queued", finished_at=None)
        elif kind == "prune":
            rows = await self.pick(c, "succeeded", "dead", "cancelled")
            await c.execute(delete(jobs).where(jobs.c.id.in_([r.id for r in rows])))
        else:  # one statement changing jobs of several statuses and priorities at once
            rows = await self.pick(c, "pending", "queued", "running", "scheduled")
            await self.move(
                c,
                rows,
                status=self.rng.choice(["queued", "scheduled", "pending"]),
                priority=jobs.c.priority % 3 + 1,
                **({"project_id": self.rng.choice(PROJECTS)} if self.rng.random() < 0.3 else {}),
            )


def sees(visibility: Visibility, row: Any) -> bool:
    """Whether ``visibility`` keeps the job ``row``: one of its projects, its owner's."""
    return (visibility.projects is None or row.project_id in visibility.projects) and (
        visibility.owner is None or row.submitted_by == visibility.owner
    )


def runtime_ms(row: Any) -> float | None:
    if row.status != "succeeded" or row.started_at is None or row.finished_at is None:
        return None
    return (row.finished_at - row.started_at).total_seconds() * 1000


async def expected_counts(c: AsyncConnection, where: CountFilter) -> dict[str, Any]:
    rows = (await c.execute(select(jobs))).all()
    start, end = where.created.created_from, where.created.created_to
    chosen = [
        r
        for r in rows
        if sees(where.visibility, r)
        and (start is None or r.created_at >= start)
        and (end is None or r.created_at < end)
        and (not where.statuses or r.status in where.statuses)
        and (where.type is None or r.type == where.type)
        and (where.priority is None or r.priority == where.priority)
    ]
    by: dict[str, dict[str, int]] = {"status": {}, "type": {}, "priority": {}}
    for r in chosen:
        for name, key in (("status", r.status), ("type", r.type), ("priority", str(r.priority))):
            by[name][key] = by[name].get(key, 0) + 1
    runtimes = [ms for r in chosen if (ms := runtime_ms(r)) is not None]
    return {
        **by,
        "runtime_sum": sum(runtimes),
        "timed": len(runtimes),
        "p95": percentile_cont(runtimes, 0.95),
    }


def random_range(rng: random.Random, now: datetime) -> CreatedRange:
    def moment() -> datetime | None:
        shape = rng.choice(["none", "day", "hour", "minute", "second"])
        if shape == "none":
            return None
        at = now - timedelta(seconds=rng.uniform(0, rng.choice([4, 80]) * 3600))
        step = {
            "day": timedelta(days=1),
            "hour": timedelta(hours=1),
            "minute": timedelta(minutes=1),
        }.get(shape)
        return at if step is None else EPOCH + ((at - EPOCH) // step) * step

    a, b = moment(), moment()
    if a is not None and b is not None and a > b:
        a, b = b, a
    return CreatedRange(a, b)


def random_visibility(rng: random.Random) -> Visibility:
    """Anyone's or one owner's jobs, in every project or a few (none, at times)."""
    projects = rng.choice([None, None, frozenset(rng.sample(PROJECTS, rng.randint(0, 2)))])
    return Visibility(rng.choice([None, *OWNERS]), projects)


async def check_reads(c: AsyncConnection, rng: random.Random, now: datetime) -> None:
    for _ in range(6):
        where = CountFilter(
            visibility=random_visibility(rng),
            created=random_range(rng, now),
            statuses=tuple(
                rng.sample(["queued", "succeeded", "dead", "running"], rng.randint(0, 2))
            ),
            type=rng.choice([None, None, *TYPES]),
            priority=rng.choice([None, None, 1, 3]),
        )
        got = await count_jobs(c, where)
        want = await expected_counts(c, where)
        assert (got.by_status, got.by_type, got.by_priority) == (
            want["status"],
            want["type"],
            want["priority"],
        ), where
        timings = await runtimes(c, where.visibility, where.created)
        timed = await expected_counts(c, CountFilter(where.visibility, where.created))
        assert sum(b.jobs for b in timings.values()) == timed["timed"]
        assert sum(b.runtime_ms for b in timings.values()) == pytest.approx(
            timed["runtime_sum"], abs=1e-3
        )
        p95 = runtime_percentile(timings, 0.95)
        if timed["p95"] is None:
            assert p95 is None
        else:
            assert p95 == pytest.approx(timed["p95"], rel=0.1, abs=1.0)


async def check_series_and_throughput(c: AsyncConnection, now: datetime) -> None:
    rows = (await c.execute(select(jobs))).all()
    db_now = (await c.execute(select(func.now()))).scalar_one()
    for visibility in (
        Visibility(),
        Visibility(OWNERS[0]),
        Visibility(projects=frozenset(PROJECTS[:1])),
        Visibility(OWNERS[1], frozenset(PROJECTS[1:])),
    ):
        visible = [r for r in rows if sees(visibility, r)]
        for minutes, count in ((1, 30), (5, 40), (60, 5), (1440, 4)):
            series = await job_series(c, visibility, bucket_minutes=minutes, buckets=count)
            step = timedelta(minutes=minutes)
            for bucket in series.buckets:
                members = [r for r in visible if bucket.start <= r.created_at < bucket.start + step]
                assert bucket.created == len(members)
                assert bucket.succeeded == sum(r.status == "succeeded" for r in members)
                assert bucket.dead == sum(r.status == "dead" for r in members)
        finished = await finished_last_hour(c, visibility)
        assert finished == sum(
            r.finished_at is not None and r.finished_at >= db_now - timedelta(hours=1)
            for r in visible
        )


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
async def test_rollups_equal_a_full_scan(store_engine: AsyncEngine, seed: int) -> None:
    rng = random.Random(seed)
    async with store_engine.connect() as c:
        now = (await c.execute(select(func.now()))).scalar_one()
    history = History(rng, now)
    for step in range(60):
        async with store_engine.begin() as c:
            await history.step(c)
            if rng.random() < 0.3:  # a fold in the writer's transaction or after it
                await fold(c, rng.choice([1, 3, 10_000]))
        if step % 12 == 11:
            async with store_engine.begin() as c:
                await check_reads(c, rng, now)
    async with store_engine.begin() as c:
        await check_reads(c, rng, now)
        await check_series_and_throughput(c, now)
    # folded to the end: nothing pending, nothing counting zero, the same answers
    async with store_engine.begin() as c:
        while await fold(c, 10_000):
            pass
    async with store_engine.begin() as c:
        for family in ROLLUPS.values():
            assert await c.scalar(select(func.count()).select_from(family["delta"])) == 0
        await check_reads(c, rng, now)
        await check_series_and_throughput(c, now)
    # a rebuild from the jobs table gives the same answers
    async with store_engine.begin() as c:
        await rebuild_rollups(c)
        await check_reads(c, rng, now)
        await check_series_and_throughput(c, now)
