"""Rollup figures read back from the rollup tables (plus the deltas not folded yet) and the
same figures recounted from every row of ``jobs``, both by bucket and an owner key (0009's
``submitted_by``, 0014's ``project_id, submitted_by``): equal when the rollups are right. Read
with plain SQL (``SELECT *``), so they serve every schema version a test migrates through.
And a history of job changes by members of two projects to count."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import ROLLUP_FAMILIES, jobs

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
STEPS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1)}
# Each family's figures: the key columns after the owner's (counts by status too; runtimes
# summed over their runtime buckets) and the measures.
REST = {"counts": ("type", "priority", "status"), "runtimes": (), "finishes": ()}
MEASURES = {family: spec[1] for family, spec in ROLLUP_FAMILIES.items()}
GRAINS = [(family, grain) for family, spec in ROLLUP_FAMILIES.items() for grain in spec[2]]

Figures = dict[tuple[Any, ...], tuple[float, ...]]

ANN, BOB = "ann@test.com", "bob@test.com"
WEB, BATCH = (
    uuid.UUID("00000000-0000-4000-8000-00000000000a"),
    uuid.UUID("00000000-0000-4000-8000-00000000000b"),
)
# Ann submits to two projects; Batch is Ann's and Bob's.
MEMBERS = ((WEB, ANN), (BATCH, ANN), (BATCH, BOB))


def bin_at(at: datetime, grain: str) -> datetime:
    return EPOCH + (at - EPOCH) // STEPS[grain] * STEPS[grain]


def _add(figures: dict[tuple[Any, ...], list[float]], key: tuple[Any, ...], *values: Any) -> None:
    sums = figures.setdefault(key, [0.0] * len(values))
    for i, value in enumerate(values):
        sums[i] += float(value)


def _nonzero(figures: dict[tuple[Any, ...], list[float]]) -> Figures:
    return {key: tuple(round(v, 3) for v in sums) for key, sums in figures.items() if sums[0]}


async def rolled_up(c: AsyncConnection, family: str, grain: str, owner: Sequence[str]) -> Figures:
    """The family's rollups of ``grain`` plus its deltas not folded yet."""
    figures: dict[tuple[Any, ...], list[float]] = {}
    for table in (f"job_{family}_{grain}", f"job_{family}_deltas"):
        for row in (await c.execute(text(f"SELECT * FROM {table}"))).mappings():
            key = (bin_at(row["bucket"], grain), *(row[c] for c in (*owner, *REST[family])))
            _add(figures, key, *(row[m] for m in MEASURES[family]))
    return _nonzero(figures)


async def recounted(c: AsyncConnection, family: str, grain: str, owner: Sequence[str]) -> Figures:
    """The same figures counted from every job."""
    figures: dict[tuple[Any, ...], list[float]] = {}
    for job in (await c.execute(text("SELECT * FROM jobs"))).mappings():
        key = (*(job[c] for c in (*owner, *REST[family])),)
        if family == "counts":
            _add(figures, (bin_at(job["created_at"], grain), *key), 1)
        elif family == "runtimes" and (ms := runtime_ms(job)) is not None:
            _add(figures, (bin_at(job["created_at"], grain), *key), 1, ms)
        elif family == "finishes" and job["finished_at"] is not None:
            _add(figures, (bin_at(job["finished_at"], grain), *key), 1)
    return _nonzero(figures)


def runtime_ms(job: Any) -> float | None:
    if job["status"] != "succeeded" or job["started_at"] is None or job["finished_at"] is None:
        return None
    return float((job["finished_at"] - job["started_at"]).total_seconds() * 1000)


async def mismatches(c: AsyncConnection, owner: Sequence[str]) -> dict[str, tuple[Figures, ...]]:
    """Each family and grain whose rollups differ from the recount: (rolled up, recounted)."""
    found: dict[str, tuple[Figures, ...]] = {}
    for family, grain in GRAINS:
        got = await rolled_up(c, family, grain, owner)
        want = await recounted(c, family, grain, owner)
        if got != want:
            found[f"{family}/{grain}"] = (got, want)
    return found


async def write_history(c: AsyncConnection, now: datetime, *, jobs_each: int = 6) -> None:
    """Jobs of every member (multi-row statements spanning both projects and both owners),
    created over the last day and a half: inserted, started, succeeded with their runtimes,
    failed, one moved to the other project, some finished ones deleted."""
    rows: list[dict[str, Any]] = [
        {
            "id": uuid.uuid4(),
            "type": ("echo", "email")[i % 2],
            "priority": 1 + i % 3,
            "payload": {},
            "submitted_by": owner,
            "project_id": project,
            "status": "queued",
            "max_attempts": 3,
            "attempt_limit": 3,
            "timeout_seconds": 30,
            "created_at": now - timedelta(minutes=397 * i + 11 * m),
        }
        for m, (project, owner) in enumerate(MEMBERS)
        for i in range(jobs_each)
    ]
    await c.execute(insert(jobs), rows)
    ids = [row["id"] for row in rows]
    started = now - timedelta(minutes=5)
    await c.execute(
        update(jobs).where(jobs.c.id.in_(ids[::2])).values(status="running", started_at=started)
    )
    for n, job_id in enumerate(ids[::4]):  # each its own runtime
        await c.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(status="succeeded", finished_at=started + timedelta(milliseconds=5 * 7**n))
        )
    await c.execute(
        update(jobs).where(jobs.c.id.in_(ids[1::4])).values(status="dead", finished_at=now)
    )
    await c.execute(update(jobs).where(jobs.c.id == ids[3]).values(project_id=BATCH))
    pruned = select(jobs.c.id).where(jobs.c.id.in_(ids), jobs.c.status == "dead").limit(2)
    await c.execute(delete(jobs).where(jobs.c.id.in_(pruned)))
