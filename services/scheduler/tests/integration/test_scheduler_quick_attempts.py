"""A quick attempt reports only its result (its worker sends JobRunning after a delay): the
scheduler records where and when it started from the result. Results come several to a
JobResults message, each applied on its own terms."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobResults, utcnow
from jobs_common.jobstore import job_attempts
from jobs_common.rabbit import RabbitBus

from .conftest import job_result, next_dispatch, submitted, timeline_reasons, wait_status

pytestmark = pytest.mark.integration


async def test_a_result_without_a_running_message_records_the_start(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted(priority=2)
    await bus.publisher.publish(topology.SUBMITTED, message)
    dispatch = await next_dispatch(bus)
    started_at = utcnow() - timedelta(milliseconds=40)
    await bus.publisher.publish(
        topology.RESULTS,
        job_result(dispatch.job_id, dispatch.attempt, worker_id="w-quick", started_at=started_at),
    )
    job = await wait_status(db, message.job_id, "succeeded")
    assert (job.worker_id, job.started_at) == ("w-quick", started_at)
    reasons = await timeline_reasons(db, message.job_id)
    assert reasons[-2:] == ["started on w-quick", "succeeded"]
    async with db.connect() as connection:
        attempt = (
            await connection.execute(
                select(job_attempts).where(job_attempts.c.job_id == message.job_id)
            )
        ).one()
    assert (attempt.status, attempt.worker_id, attempt.started_at) == (
        "succeeded",
        "w-quick",
        started_at,
    )
    assert attempt.duration_ms >= 40


async def test_results_several_to_a_message_are_each_applied(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    jobs = [submitted(priority=2) for _ in range(3)]
    for job in jobs:
        await bus.publisher.publish(topology.SUBMITTED, job)
    dispatches = [await next_dispatch(bus) for _ in jobs]
    reports = [job_result(d.job_id, d.attempt, worker_id="w-batch") for d in dispatches]
    await bus.publisher.publish(topology.RESULTS, JobResults(results=reports[:2]))
    await bus.publisher.publish(topology.RESULTS, JobResults(results=reports[1:]))  # again
    for job in jobs:
        row = await wait_status(db, job.job_id, "succeeded")
        assert row.worker_id == "w-batch"
