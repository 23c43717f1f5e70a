"""CancelAttempt on jobs.events (control.cancel): a running attempt is cancelled, reported
``cancelled`` and acked; a cancelled attempt delivered later is never started."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from prometheus_client import REGISTRY

from jobs_common.contracts import ErrorKind, JobError
from jobs_common.topology import READY_HIGH, RESULTS, RUNNING
from jobs_testing.worker_messages import Observer, job_of, make_dispatch, quick_simulate, until
from jobs_worker.runtime import WorkerRuntime

pytestmark = pytest.mark.integration


def cancellations(where: str) -> float:
    return REGISTRY.get_sample_value("worker_cancellations_total", {"where": where}) or 0.0


async def until_idle(runtime: WorkerRuntime) -> None:
    async with asyncio.timeout(10):
        await until(lambda: runtime.in_flight == 0 and len(runtime.active) == 0)


@pytest.mark.parametrize(
    ("attempt", "reason"), [(1, "cancelled"), (None, "cancelled"), (1, "lease lost")]
)
async def test_cancel_attempt_stops_a_running_job(
    start_worker: Any, observer: Observer, attempt: int | None, reason: str
) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker()
    before = cancellations("running")
    job = make_dispatch(
        "simulate", quick_simulate(minSeconds=60, maxSeconds=60), timeout_seconds=120
    )
    await observer.publish(job)
    await observer.wait_running(running, job.job_id)

    # Control messages are applied in order: the first two must not touch this attempt.
    await observer.cancel(job.job_id, 2, "another attempt")
    await observer.cancel(uuid.uuid4(), None, "another job")
    await observer.cancel(job.job_id, attempt, reason)
    result = await observer.wait_result(results, job.job_id)
    assert result.outcome == "cancelled"
    assert result.error == JobError(
        kind=ErrorKind.PERMANENT, error_class="Cancelled", message=reason
    )
    assert result.result is None
    assert (result.worker_id, result.attempt) == (runtime.worker_id, 1)
    assert result.started_at <= result.finished_at
    assert cancellations("running") == before + 1

    await until_idle(runtime)
    await runtime.stop()  # an unacked delivery would go back to its queue now
    assert await observer.message_count(READY_HIGH) == 0
    assert len([m for m in running.messages if job_of(m) == str(job.job_id)]) == 1


async def test_a_cancelled_job_is_never_started(start_worker: Any, observer: Observer) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker()
    before = cancellations("not_started")
    job = make_dispatch("simulate", quick_simulate())
    await observer.cancel(job.job_id, None, "cancelled")
    async with asyncio.timeout(10):
        await until(lambda: runtime.cancelled.reason_for(job.job_id, 1) is not None)

    await observer.publish(job)
    result = await observer.wait_result(results, job.job_id)
    assert result.outcome == "cancelled"
    assert result.error is not None and result.error.message == "cancelled"
    assert cancellations("not_started") == before + 1

    # A JobRunning of the cancelled job would precede this one on jobs.running.
    marker = make_dispatch("simulate", quick_simulate())
    await observer.publish(marker)
    await observer.wait_running(running, marker.job_id)
    assert [m for m in running.messages if job_of(m) == str(job.job_id)] == []

    await until_idle(runtime)
    await runtime.stop()
    assert await observer.message_count(READY_HIGH) == 0


async def test_a_lost_attempt_is_refused_but_the_next_attempt_runs(
    start_worker: Any, observer: Observer
) -> None:
    results = await observer.collect(RESULTS)
    runtime = await start_worker()
    first = make_dispatch("simulate", quick_simulate())
    second = first.model_copy(update={"attempt": 2, "message_id": uuid.uuid4()})
    await observer.cancel(first.job_id, 1, "lease lost")
    async with asyncio.timeout(10):
        await until(lambda: runtime.cancelled.reason_for(first.job_id, 1) is not None)

    await observer.publish(first)
    await observer.publish(second)
    async with asyncio.timeout(20):
        found = await results.wait_results(first.job_id, count=2)
    outcomes = {r.attempt: (r.outcome, r.error.message if r.error else None) for r in found}
    assert outcomes == {1: ("cancelled", "lease lost"), 2: ("succeeded", None)}
