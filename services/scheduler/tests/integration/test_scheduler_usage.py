"""A project's usage per UTC day (issue 33, point 4; docs/flow-control.md, "Usage"): jobs
submitted, attempts, run seconds, succeeded and dead, appended by the transactions that did
them, folded by the usage sweep, kept when retention deletes the jobs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import ErrorKind, utcnow
from jobs_common.jobstore import jobs, project_usage
from jobs_common.rabbit import RabbitBus
from jobs_common.tenancy import personal_project_id

from .conftest import FAILURE, eventually, job_result, next_dispatch, submitted, wait_status

pytestmark = pytest.mark.integration

PROJECT = personal_project_id("user@test.com")


async def usage_today(db: AsyncEngine) -> Any:
    async with db.connect() as connection:
        return (
            await connection.execute(
                select(project_usage).where(
                    project_usage.c.project_id == PROJECT,
                    project_usage.c.day == datetime.now(UTC).date(),
                )
            )
        ).one_or_none()


async def test_a_project_s_day_counts_what_its_jobs_did_and_outlives_them(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    done, failing = submitted(), submitted(max_attempts=1)
    for message in (done, done, failing):  # a redelivered submission is one job
        await bus.publisher.publish(topology.SUBMITTED, message)
    for _ in range(2):
        await next_dispatch(bus)
    await wait_status(db, failing.job_id, "queued")
    started = utcnow() - timedelta(seconds=1.5)
    await bus.publisher.publish(
        topology.RESULTS, job_result(done.job_id, 1, result={}, started_at=started)
    )
    fatal = FAILURE.model_copy(update={"kind": ErrorKind.PERMANENT})
    await bus.publisher.publish(
        topology.RESULTS, job_result(failing.job_id, 1, "failed", error=fatal)
    )
    await wait_status(db, done.job_id, "succeeded")
    await wait_status(db, failing.job_id, "dead")

    async def folded() -> Any:
        row = await usage_today(db)
        return row if row is not None and row.succeeded + row.dead == 2 else None

    row = await eventually(folded, what="the day's usage folded")
    assert (row.submitted, row.attempts, row.succeeded, row.dead) == (2, 2, 1, 1)
    assert 1.4 <= row.run_seconds <= 60
    async with db.begin() as connection:  # retention deletes the jobs: usage stays
        await connection.execute(delete(jobs))
    assert (await usage_today(db)) == row
