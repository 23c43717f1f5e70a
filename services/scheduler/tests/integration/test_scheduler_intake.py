"""Jobs arrive several to a JobsSubmitted message: each is recorded once, and a job
PostgreSQL refuses is stored as poison alone, without its message's other jobs."""

from __future__ import annotations

from functools import partial

import pytest
from prometheus_client import REGISTRY
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobsSubmitted
from jobs_common.rabbit import RabbitBus

from .conftest import eventually, job_row, poison_reasons, submitted, wait_status

pytestmark = pytest.mark.integration


def requeued() -> float:
    value = REGISTRY.get_sample_value(
        "jobs_deliveries_settled_total", {"queue": topology.SUBMITTED, "action": "requeue"}
    )
    return value or 0.0


async def test_a_refused_job_is_poison_alone_and_its_neighbours_are_recorded(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    first, second = submitted(), submitted()
    broken = submitted(payload={"text": "nul \u0000 inside"})  # jsonb refuses it
    requeues_before = requeued()
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=[first, broken, second]))
    await wait_status(db, first.job_id, "queued")
    await wait_status(db, second.job_id, "queued")

    (reason,) = await eventually(
        partial(poison_reasons, db, broken.message_id), what="the refused job in poison_messages"
    )
    assert reason.startswith(f"job {broken.job_id} not recorded")
    assert await job_row(db, broken.job_id) is None
    assert requeued() == requeues_before  # handled at once, not requeued


async def test_jobs_redelivered_in_another_message_are_recorded_once(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    jobs = [submitted() for _ in range(3)]
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=jobs[:2]))
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=jobs[1:]))  # a republish
    for job in jobs:
        row = await wait_status(db, job.job_id, "queued")
        assert row.attempt == 1
