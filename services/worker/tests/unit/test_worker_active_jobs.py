"""The registry of running jobs: keyed by (job_id, attempt); cancelling by phase; leases."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import pytest

from jobs_common.contracts import JobDispatch, utcnow
from jobs_worker.app.active_jobs import ActiveJob, ActiveJobs, Phase

pytestmark = pytest.mark.unit


def dispatch(attempt: int = 1, job_id: uuid.UUID | None = None) -> JobDispatch:
    return JobDispatch(
        job_id=job_id or uuid.uuid4(),
        attempt=attempt,
        job_type="simulate",
        priority=2,
        payload={},
        timeout_seconds=10,
        dispatched_at=datetime.now(UTC),
    )


async def test_cancel_cancels_the_handler_task_not_the_delivery_task() -> None:
    registry = ActiveJobs()
    delivery = asyncio.create_task(asyncio.Event().wait())
    handler = asyncio.create_task(asyncio.Event().wait())
    job = ActiveJob(
        dispatch=dispatch(), queue="jobs.ready.medium", task=delivery, phase=Phase.RUNNING
    )
    job.handler = handler
    registry.add(job)
    assert registry.keys() == [job.key] and len(registry) == 1
    assert registry.cancel((job.dispatch.job_id, 2), reason="x") is False
    assert registry.cancel(job.key, reason="user asked") is True
    with pytest.raises(asyncio.CancelledError):
        await handler
    assert job.cancel_reason == "user asked"
    assert not delivery.done()
    assert registry.cancel(job.key, reason="again") is True  # still running: reason kept
    assert job.cancel_reason == "user asked"
    delivery.cancel()
    await asyncio.gather(delivery, return_exceptions=True)
    assert registry.cancel(job.key, reason="late") is False  # delivery task done


async def test_cancel_while_starting_records_the_reason_only() -> None:
    registry = ActiveJobs()
    delivery = asyncio.create_task(asyncio.Event().wait())
    job = ActiveJob(dispatch=dispatch(), queue="q", task=delivery)
    registry.add(job)
    assert registry.cancel(job.key, reason="cancelled") is True
    assert job.cancel_reason == "cancelled" and job.handler is None
    assert not delivery.done()
    delivery.cancel()
    await asyncio.gather(delivery, return_exceptions=True)


async def test_no_cancel_once_the_outcome_is_decided() -> None:
    registry = ActiveJobs()
    delivery = asyncio.create_task(asyncio.Event().wait())
    job = ActiveJob(dispatch=dispatch(), queue="q", task=delivery, phase=Phase.REPORTING)
    registry.add(job)
    assert registry.cancel(job.key, reason="lease lost") is False
    assert job.cancel_reason is None
    delivery.cancel()
    await asyncio.gather(delivery, return_exceptions=True)


async def test_cancel_matching_one_attempt_or_every_attempt_of_a_job() -> None:
    registry = ActiveJobs()
    job_id = uuid.uuid4()
    tasks = [asyncio.create_task(asyncio.Event().wait()) for _ in range(3)]
    first = ActiveJob(dispatch=dispatch(1, job_id), queue="q", task=tasks[0])
    second = ActiveJob(dispatch=dispatch(2, job_id), queue="q", task=tasks[1])
    other = ActiveJob(dispatch=dispatch(1), queue="q", task=tasks[2])
    for job in (first, second, other):
        registry.add(job)
    assert registry.cancel_matching(job_id, 2, reason="lease lost") == [second.key]
    assert first.cancel_reason is None
    assert sorted(registry.cancel_matching(job_id, None, reason="cancelled")) == sorted(
        [first.key, second.key]
    )
    assert (first.cancel_reason, second.cancel_reason) == ("cancelled", "lease lost")
    assert other.cancel_reason is None
    assert registry.cancel_matching(uuid.uuid4(), None, reason="x") == []
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_leased_lists_attempts_that_run_or_wait_for_their_result() -> None:
    """Announced or not (a quick attempt sends no JobRunning): a claim of a redelivered copy
    must see every attempt this worker runs or holds a result for (issue 31)."""
    registry = ActiveJobs()
    task = asyncio.create_task(asyncio.Event().wait())
    at = utcnow()
    starting = ActiveJob(dispatch=dispatch(), queue="q", task=task)
    announcing = ActiveJob(dispatch=dispatch(), queue="q", task=task, started_at=at)
    running = ActiveJob(
        dispatch=dispatch(),
        queue="q",
        task=task,
        phase=Phase.RUNNING,
        running_confirmed=True,
        started_at=at,
    )
    unannounced = ActiveJob(
        dispatch=dispatch(), queue="q", task=task, phase=Phase.RUNNING, started_at=at
    )
    reporting = ActiveJob(
        dispatch=dispatch(), queue="q", task=task, phase=Phase.REPORTING, started_at=at
    )
    finished = ActiveJob(
        dispatch=dispatch(),
        queue="q",
        task=task,
        phase=Phase.REPORTING,
        started_at=at,
        result_confirmed=True,
    )
    refused = ActiveJob(dispatch=dispatch(), queue="q", task=task, phase=Phase.REPORTING)
    for job in (starting, announcing, running, unannounced, reporting, finished, refused):
        registry.add(job)
    leased = sorted(registry.leased(), key=lambda held: str(held[0]))
    assert leased == sorted(
        [(*job.key, at) for job in (running, unannounced, reporting)],
        key=lambda held: str(held[0]),
    )
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_remove_only_the_registered_instance() -> None:
    registry = ActiveJobs()
    task = asyncio.create_task(asyncio.sleep(0))
    first = ActiveJob(dispatch=dispatch(), queue="q", task=task)
    second = ActiveJob(dispatch=first.dispatch, queue="q", task=task)
    registry.add(second)
    registry.remove(first)
    assert registry.get(first.key) is second
    registry.remove(second)
    assert registry.get(first.key) is None
    await task


async def test_attempts_with_a_confirmed_result_are_remembered_the_latest_first() -> None:
    registry = ActiveJobs(reported_capacity=2)
    delivery = asyncio.create_task(asyncio.sleep(0))
    jobs = [ActiveJob(dispatch=dispatch(), queue="q", task=delivery) for _ in range(4)]
    for job in jobs[:3]:
        job.result_confirmed = True
    for job in jobs:
        registry.add(job)
        registry.remove(job)
    assert [registry.reported(job.key) for job in jobs] == [False, True, True, False]
    await delivery
