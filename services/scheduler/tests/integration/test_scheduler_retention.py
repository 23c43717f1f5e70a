"""Retention removes exactly what it should (docs/operations.md, "Retention"): finished jobs
past their status's retention go with their attempts, events, log lines and resolved dead
letters; a job with an open dead letter, a batch with a member still kept, a parent with a
dependant still kept and a schedule's latest job stay; old inbox ids, poison messages,
schedule fires and audit rows go after their windows. Rows written straight into the store,
pruned by the real sweep on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import Table, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import (
    batches,
    dead_letter_actions,
    dead_letters,
    inbox,
    job_attempts,
    job_dependencies,
    job_events,
    job_logs,
    jobs,
    poison_messages,
    schedule_fires,
    schedules,
)
from jobs_scheduler.adapters.archive import JobArchive, read_archive
from jobs_scheduler.app.retention import Windows, prune
from jobs_scheduler.app.unit_of_work import UnitOfWork
from jobs_scheduler.domain.retention import Retention

pytestmark = pytest.mark.integration

DAY = timedelta(days=1)
KEEP = Retention()  # the defaults: succeeded and cancelled 7 days, dead 30
WINDOWS = Windows(inbox=7 * DAY, poison=30 * DAY, audit=90 * DAY)


class Store:
    def __init__(self, engine: AsyncEngine, now: datetime) -> None:
        self.engine = engine
        self.now = now

    async def insert(self, table: Table, **values: Any) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(insert(table).values(**values))

    async def job(
        self, status: str, finished_days_ago: float | None = None, **values: Any
    ) -> uuid.UUID:
        """A job with one attempt, two events and a log line."""
        job_id = uuid.uuid4()
        finished = None if finished_days_ago is None else self.now - finished_days_ago * DAY
        await self.insert(
            jobs,
            id=job_id,
            type="echo",
            priority=2,
            payload={},
            submitted_by="u@test.com",
            status=status,
            attempt=1,
            max_attempts=3,
            attempt_limit=3,
            timeout_seconds=60,
            finished_at=finished,
            **values,
        )
        await self.insert(job_attempts, job_id=job_id, attempt=1, status="succeeded")
        for to_status in ("queued", status):
            await self.insert(job_events, job_id=job_id, attempt=1, to_status=to_status, reason="r")
        await self.insert(
            job_logs,
            job_id=job_id,
            attempt=1,
            worker_id="w",
            level="INFO",
            message="line",
            at=self.now,
            message_id=uuid.uuid4(),
        )
        return job_id

    async def letter(self, job_id: uuid.UUID, *, resolved: bool) -> None:
        await self.insert(
            dead_letters,
            id=uuid.uuid4(),
            job_id=job_id,
            attempt=1,
            reason="max_attempts",
            payload_snapshot={},
            resolved_at=self.now if resolved else None,
            resolution="discarded" if resolved else None,
        )

    async def count(self, table: Table, column: Any, ids: list[Any]) -> int:
        async with self.engine.connect() as connection:
            found = await connection.scalar(
                select(func.count()).select_from(table).where(column.in_(ids))
            )
        return int(found or 0)


async def prune_all(engine: AsyncEngine, *, limit: int = 1_000) -> int:
    return await UnitOfWork(engine).run(partial(prune, keep=KEEP, windows=WINDOWS, limit=limit))


@pytest.fixture
async def store(db: AsyncEngine) -> Store:
    async with db.connect() as connection:
        now = await connection.scalar(select(func.now()))
    return Store(db, now)


# (status, days since it finished (None: not finished), its dead letter, kept?)
ALONE = [
    ("succeeded", 8, None, False),
    ("succeeded", 6, None, True),
    ("cancelled", 8, None, False),
    ("cancelled", 6.9, None, True),
    ("dead", 8, "resolved", True),
    ("dead", 31, "resolved", False),
    ("dead", 31, "open", True),
    ("dead", 400, "open", True),
    ("running", None, None, True),
    ("queued", None, None, True),
    ("scheduled", None, None, True),
    ("blocked", None, None, True),
]


async def test_finished_jobs_go_after_their_statuss_retention_with_what_belongs_to_them(
    store: Store, db: AsyncEngine
) -> None:
    kept: list[uuid.UUID] = []
    gone: list[uuid.UUID] = []
    for status, days, letter, stays in ALONE:
        job_id = await store.job(status, days)
        if letter is not None:
            await store.letter(job_id, resolved=letter == "resolved")
        (kept if stays else gone).append(job_id)
    assert await prune_all(db) == len(gone)
    for table, column in [
        (jobs, jobs.c.id),
        (job_attempts, job_attempts.c.job_id),
        (job_events, job_events.c.job_id),
        (job_logs, job_logs.c.job_id),
        (dead_letters, dead_letters.c.job_id),
    ]:
        assert await store.count(table, column, gone) == 0, table.name
    assert await store.count(jobs, jobs.c.id, kept) == len(kept)
    assert await store.count(job_logs, job_logs.c.job_id, kept) == len(kept)
    assert await store.count(job_events, job_events.c.job_id, kept) == 2 * len(kept)
    assert await store.count(dead_letters, dead_letters.c.job_id, kept) == 3
    assert await prune_all(db) == 0  # nothing left to do


async def test_a_batch_goes_with_its_last_member(store: Store, db: AsyncEngine) -> None:
    done, waiting = uuid.uuid4(), uuid.uuid4()
    for batch_id in (done, waiting):
        await store.insert(batches, id=batch_id, submitted_by="u@test.com", total=2)
    old = [await store.job("succeeded", 9, batch_id=done) for _ in range(2)]
    kept = [
        await store.job("succeeded", 9, batch_id=waiting),
        await store.job("succeeded", 2, batch_id=waiting),  # not due yet: keeps its batch whole
    ]
    await prune_all(db)
    assert await store.count(jobs, jobs.c.id, old) == 0
    assert await store.count(batches, batches.c.id, [done]) == 0
    assert await store.count(jobs, jobs.c.id, kept) == 2
    assert await store.count(batches, batches.c.id, [waiting]) == 1


async def test_a_parent_stays_while_a_dependant_is_kept(store: Store, db: AsyncEngine) -> None:
    parent_of_recent = await store.job("succeeded", 9)
    recent_child = await store.job("succeeded", 1)
    parent_of_old = await store.job("succeeded", 9)
    old_child = await store.job("succeeded", 8)
    parent_of_dead = await store.job("succeeded", 9)
    dead_child = await store.job("dead", 31)  # due, but its dead letter is open
    await store.letter(dead_child, resolved=False)
    for parent, child in [
        (parent_of_recent, recent_child),
        (parent_of_old, old_child),
        (parent_of_dead, dead_child),
    ]:
        await store.insert(job_dependencies, job_id=child, depends_on=parent)
    await prune_all(db)
    kept = [parent_of_recent, recent_child, parent_of_dead, dead_child]
    assert await store.count(jobs, jobs.c.id, kept) == 4
    assert await store.count(jobs, jobs.c.id, [parent_of_old, old_child]) == 0


async def test_a_schedules_latest_job_stays(store: Store, db: AsyncEngine) -> None:
    earlier = await store.job("succeeded", 20)
    latest = await store.job("succeeded", 10)
    schedule_id = uuid.uuid4()
    await store.insert(
        schedules,
        id=schedule_id,
        name="nightly",
        cron="0 3 * * *",
        timezone="UTC",
        job_template={"type": "echo"},
        owner="u@test.com",
        last_job_id=latest,
    )
    for fired, job_id in ((store.now - 31 * DAY, earlier), (store.now - 10 * DAY, latest)):
        await store.insert(schedule_fires, schedule_id=schedule_id, fire_time=fired, job_id=job_id)
    await prune_all(db)
    assert await store.count(jobs, jobs.c.id, [earlier]) == 0
    assert await store.count(jobs, jobs.c.id, [latest]) == 1
    # the fire older than the longest retention (30 days) goes; the recent one stays
    assert await store.count(schedule_fires, schedule_fires.c.job_id, [earlier, latest]) == 1


async def test_old_inbox_ids_poison_messages_and_audit_rows_go_after_their_windows(
    store: Store, db: AsyncEngine
) -> None:
    at = store.now
    inbox_ids = {days: uuid.uuid4() for days in (8, 6)}
    for days, message_id in inbox_ids.items():
        await store.insert(
            inbox, message_id=message_id, queue="jobs.retry", received_at=at - days * DAY
        )
    for days in (31, 29):
        await store.insert(
            poison_messages,
            queue="jobs.results",
            reason=f"{days}",
            body=b"x",
            received_at=at - days * DAY,
        )
    for days in (91, 89):
        await store.insert(
            dead_letter_actions, action="discard", actor="a", reason=f"{days}", at=at - days * DAY
        )
    await prune_all(db)
    assert await store.count(inbox, inbox.c.message_id, list(inbox_ids.values())) == 1
    assert await store.count(inbox, inbox.c.message_id, [inbox_ids[6]]) == 1
    assert await store.count(poison_messages, poison_messages.c.reason, ["31", "29"]) == 1
    assert await store.count(poison_messages, poison_messages.c.reason, ["29"]) == 1
    assert await store.count(dead_letter_actions, dead_letter_actions.c.reason, ["91", "89"]) == 1
    assert await store.count(dead_letter_actions, dead_letter_actions.c.reason, ["89"]) == 1


async def test_a_pass_removes_at_most_its_batch_oldest_first(store: Store, db: AsyncEngine) -> None:
    by_age = [await store.job("succeeded", 10 + days) for days in range(5)]
    assert await prune_all(db, limit=2) == 2
    assert await store.count(jobs, jobs.c.id, by_age[3:]) == 0  # the two finished longest ago
    assert await store.count(jobs, jobs.c.id, by_age[:3]) == 3
    assert await prune_all(db, limit=2) == 2
    assert await prune_all(db, limit=2) == 1
    assert await store.count(jobs, jobs.c.id, by_age) == 0


async def test_the_metrics_say_how_far_behind_pruning_is(store: Store, db: AsyncEngine) -> None:
    for days in (8, 9, 10):
        await store.job("succeeded", days)
    await prune_all(db, limit=1)
    behind = REGISTRY.get_sample_value(
        "scheduler_retention_behind_seconds", {"status": "succeeded"}
    )
    assert behind is not None and DAY.total_seconds() < behind < 2.1 * DAY.total_seconds()
    await prune_all(db)
    assert (
        REGISTRY.get_sample_value("scheduler_retention_behind_seconds", {"status": "succeeded"})
        == 0.0
    )
    assert (
        REGISTRY.get_sample_value("scheduler_retention_pruned_total", {"table": "jobs"}) or 0
    ) >= 3


async def archive_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m jobs_scheduler.archive ...``, as an operator runs it."""
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "jobs_scheduler.archive", *args],
        capture_output=True,
        text=True,
        check=True,
    )


async def test_pruned_jobs_are_archived_first_and_load_back(
    store: Store, db: AsyncEngine, jobs_database_url: str, tmp_path: Path
) -> None:
    archive = JobArchive(tmp_path / "archive", "replica-a")
    old = await store.job("dead", 31)
    await store.letter(old, resolved=True)
    await store.job("succeeded", 1)  # kept: not archived
    removed = await UnitOfWork(db).run(
        partial(prune, keep=KEEP, windows=WINDOWS, limit=100, archive=archive)
    )
    assert removed == 1
    [path] = (tmp_path / "archive").iterdir()
    assert path.name == f"jobs-{store.now:%Y-%m-%dT%H}-replica-a.jsonl.gz"
    [record] = list(read_archive(path))
    assert (record["format"], record["job"]["id"], record["job"]["status"]) == (1, str(old), "dead")
    assert [len(record[key]) for key in ("attempts", "events", "logs", "deadLetters")] == [
        1,
        2,
        1,
        1,
    ]
    assert await store.count(jobs, jobs.c.id, [old]) == 0

    # A pass whose delete did not commit archives the job again: the loader keeps one copy.
    archive.append([record], store.now)
    shown = await archive_command("show", str(path), "--job", str(old))
    assert [json.loads(line)["job"]["id"] for line in shown.stdout.splitlines()] == [str(old)] * 2
    loaded = await archive_command("load", str(path), "--database-url", jobs_database_url)
    assert "1 job(s) loaded in all" in loaded.stderr
    for table, column, count in [
        (jobs, jobs.c.id, 1),
        (job_attempts, job_attempts.c.job_id, 1),
        (job_events, job_events.c.job_id, 2),
        (job_logs, job_logs.c.job_id, 1),
        (dead_letters, dead_letters.c.job_id, 1),
    ]:
        assert await store.count(table, column, [old]) == count, table.name
