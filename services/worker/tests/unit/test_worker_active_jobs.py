"""The registry of running jobs: keyed by (job_id, attempt), cancel by key."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import pytest

from jobs_common.contracts import JobDispatch
from jobs_worker.active import ActiveJob, ActiveJobs

pytestmark = pytest.mark.unit


def dispatch(attempt: int = 1) -> JobDispatch:
    return JobDispatch(
        job_id=uuid.uuid4(),
        attempt=attempt,
        job_type="simulate",
        priority=2,
        payload={},
        timeout_seconds=10,
        dispatched_at=datetime.now(UTC),
    )


async def test_cancel_a_running_job_by_key() -> None:
    registry = ActiveJobs()
    task = asyncio.create_task(asyncio.Event().wait())
    job = ActiveJob(dispatch=dispatch(), queue="jobs.ready.medium", task=task)
    registry.add(job)
    assert registry.keys() == [job.key] and len(registry) == 1
    assert registry.cancel((job.dispatch.job_id, 2), reason="x") is False
    assert registry.cancel(job.key, reason="user asked") is True
    with pytest.raises(asyncio.CancelledError):
        await task
    assert job.cancel_reason == "user asked"
    assert registry.cancel(job.key, reason="again") is False  # already done


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
