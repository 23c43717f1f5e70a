"""Pruning while jobs flow loses no live job: the real scheduler runs with a one-second
retention and its sweep every 0.1 s while jobs are submitted, dispatched and finished (a
worker stand-in answers each dispatch); at the end every job is in the store or in the
archive, the archive holds only jobs that had ended, each job was dispatched once, and the
dead jobs whose letters are open are all still there."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import ErrorKind, JobDispatch
from jobs_common.jobstore import jobs
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.archive import read_archive
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import FAILURE, job_result, submitted

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

JOBS = 150
FAILING = 10  # end dead (a permanent error): their letters stay open, so they stay


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings, tmp_path: Path) -> Settings:
    return scheduler_settings.model_copy(
        update={
            "retention_succeeded_days": 1 / 86_400,  # one second
            "retention_dead_days": 1 / 86_400,
            "retention_interval_seconds": 0.1,
            "retention_batch_size": 20,
            "archive_dir": tmp_path / "archive",
        }
    )


async def test_pruning_under_load_loses_no_live_job(
    bus: RabbitBus, db: AsyncEngine, scheduler_settings: Settings
) -> None:
    messages = [submitted() for _ in range(JOBS)]
    failing = {m.job_id for m in messages[:FAILING]}
    dispatched: Counter[uuid.UUID] = Counter()
    ready = bus.topology.queues[topology.READY_MEDIUM]

    stop = asyncio.Event()

    async def worker() -> None:
        """Answers each dispatch at once: a success, or a permanent error for ``failing``.
        Stopped by ``stop``, not cancelled: a cancel can land inside the broker client's get
        and be lost there."""
        while not stop.is_set():
            message = await ready.get(no_ack=True, fail=False)
            if message is None:
                await asyncio.sleep(0.02)
                continue
            dispatch = JobDispatch.model_validate_json(message.body)
            dispatched[dispatch.job_id] += 1
            if dispatch.job_id in failing:
                error = FAILURE.model_copy(update={"kind": ErrorKind.PERMANENT})
                report = job_result(dispatch.job_id, dispatch.attempt, "failed", error=error)
            else:
                report = job_result(dispatch.job_id, dispatch.attempt)
            await bus.publisher.publish(topology.RESULTS, report)

    answering = asyncio.create_task(worker())
    try:
        for message in messages:
            await bus.publisher.publish(topology.SUBMITTED, message)
            await asyncio.sleep(0.01)
        archive_dir = scheduler_settings.archive_dir
        assert archive_dir is not None

        def archived() -> dict[uuid.UUID, str]:
            if not archive_dir.exists():
                return {}
            return {
                uuid.UUID(record["job"]["id"]): record["job"]["status"]
                for path in sorted(archive_dir.iterdir())
                for record in read_archive(path)
            }

        async def in_store() -> dict[uuid.UUID, str]:
            async with db.connect() as connection:
                rows = await connection.execute(
                    select(jobs.c.id, jobs.c.status).where(
                        jobs.c.id.in_([m.job_id for m in messages])
                    )
                )
                return {row.id: row.status for row in rows}

        async def only_the_dead_left() -> dict[uuid.UUID, str] | None:
            found = await in_store()
            return found if set(found) == failing else None

        kept = await eventually(only_the_dead_left, timeout=90, what="the pruned jobs gone")
        gone = await asyncio.to_thread(archived)
    finally:
        stop.set()
        await asyncio.wait_for(answering, timeout=10)
    assert set(gone.values()) == {"succeeded"}  # only jobs that had ended
    assert set(gone) | set(kept) == {m.job_id for m in messages}
    assert kept == {job_id: "dead" for job_id in failing}  # open dead letters keep them
    assert set(dispatched.values()) == {1} and len(dispatched) == JOBS
