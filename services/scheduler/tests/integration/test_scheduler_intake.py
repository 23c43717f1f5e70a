"""Jobs arrive several to a JobsSubmitted message: each is recorded once; a job whose own
text no store can hold is stored as poison alone, without its message's other jobs; a
refusal the job's data does not explain is retried, never parked while the API says
published (app/intake.py)."""

from __future__ import annotations

import uuid
from functools import partial

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import JobsSubmitted
from jobs_common.rabbit import RabbitBus
from jobs_common.tenancy import personal_project_id
from jobs_scheduler.settings import Settings

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
    assert reason.startswith(f"job {broken.job_id} not recorded: payload.text holds a NUL")
    assert await job_row(db, broken.job_id) is None
    assert requeued() == requeues_before  # handled at once, not requeued


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings) -> Settings:
    return scheduler_settings.model_copy(
        update={
            "consumer_max_requeues": 10_000,
            "consumer_requeue_pause_seconds": 0.02,
            "consumer_requeue_pause_max_seconds": 0.1,
        }
    )


async def test_a_refusal_the_jobs_data_does_not_explain_is_retried_not_parked(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """PostgreSQL refuses a job for a reason of its own (here a constraint the test adds: a
    schema the API does not know about): the message is requeued, nothing is parked as
    poison, and once the database takes the job every job of the message is recorded."""
    async with db.begin() as connection:
        await connection.execute(
            text("ALTER TABLE jobs ADD CONSTRAINT test_refused CHECK (type <> 'refused.type')")
        )
    first, second = submitted(), submitted()
    refused = submitted(job_type="refused.type")
    requeues_before = requeued()
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=[first, refused, second]))

    async def requeued_twice() -> bool:
        return requeued() - requeues_before >= 2

    await eventually(requeued_twice, what="the message requeued")
    assert await job_row(db, first.job_id) is None  # the message waits whole
    assert await poison_reasons(db, refused.message_id) == []
    async with db.begin() as connection:
        await connection.execute(text("ALTER TABLE jobs DROP CONSTRAINT test_refused"))
    for job in (first, refused, second):
        await wait_status(db, job.job_id, "queued")
    assert await poison_reasons(db, refused.message_id) == []


async def test_jobs_redelivered_in_another_message_are_recorded_once(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    jobs = [submitted() for _ in range(3)]
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=jobs[:2]))
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=jobs[1:]))  # a republish
    for job in jobs:
        row = await wait_status(db, job.job_id, "queued")
        assert row.attempt == 1


async def test_each_job_and_batch_is_recorded_in_the_project_its_message_names(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """The project rides in the message (docs/tenancy.md); a message of an earlier release
    without one records the job in its owner's personal default project."""
    project = uuid.uuid4()
    batch = uuid.uuid4()
    named = submitted(project_id=project, batch_id=batch, batch_size=2, api_key="abcd1234")
    sibling = submitted(project_id=project, batch_id=batch, batch_size=2)
    unnamed = submitted(submitted_by="Erin@Example.com")
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=[named, sibling, unnamed]))
    for job in (named, sibling, unnamed):
        await wait_status(db, job.job_id, "queued")
    assert (await job_row(db, named.job_id)).project_id == project
    async with db.connect() as connection:
        reasons = await connection.execute(
            text("SELECT job_id, reason FROM job_events WHERE to_status = 'pending'")
        )
        first = dict(reasons.all())
    # The timeline says who submitted: a key by its prefix.
    assert first[named.job_id] == "submitted with API key abcd1234"
    assert first[sibling.job_id] == "submitted"
    assert (await job_row(db, unnamed.job_id)).project_id == personal_project_id("erin@example.com")
    async with db.connect() as connection:
        recorded = await connection.execute(
            text("SELECT project_id FROM batches WHERE id = :id"), {"id": batch}
        )
        assert recorded.scalar_one() == project
