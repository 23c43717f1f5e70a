"""The scheduler's part of the metric catalogue, driven through the real runtime: dispatches by
ready queue, outcomes counted once, the queue wait and run time of attempts, lease expiries
and its outbox backlog."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import delete, insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import ErrorKind, JobRunning, utcnow
from jobs_common.jobstore import outbox
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.outbox_relay import OutboxRelay
from jobs_scheduler.settings import Settings

from .conftest import (
    FAILURE,
    eventually,
    job_result,
    next_dispatch,
    submitted,
    wait_status,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings) -> Settings:
    # Short leases, so a silent worker's attempt expires within the test.
    return scheduler_settings.model_copy(update={"lease_seconds": 1, "tick_interval_seconds": 0.1})


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def reaches(name: str, expected: float, **labels: str) -> None:
    """Counters are bumped just after the commit: wait for the value, never sleep."""

    async def probe() -> bool:
        return sample(name, **labels) == expected

    await eventually(probe, what=f"{name}{labels} == {expected}")


async def test_a_job_is_dispatched_waits_runs_and_succeeds_once(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    wait = {"type": "simulate", "priority": "high"}
    before = {
        "dispatched": sample("jobs_dispatched_total", queue=topology.READY_HIGH),
        "succeeded": sample("jobs_succeeded_total", type="simulate"),
        "waits": sample("job_queue_wait_seconds_count", **wait),
        "runs": sample("job_run_seconds_count", type="simulate"),
        "ran": sample("job_run_seconds_sum", type="simulate"),
    }
    message = submitted(priority=3)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus, topology.READY_HIGH)
    await reaches("jobs_dispatched_total", before["dispatched"] + 1, queue=topology.READY_HIGH)

    started = utcnow()
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w1", started_at=started),
    )
    await reaches("job_queue_wait_seconds_count", before["waits"] + 1, **wait)
    await bus.publisher.publish(topology.RESULTS, job_result(message.job_id, 1))
    await wait_status(db, message.job_id, "succeeded")
    await reaches("jobs_succeeded_total", before["succeeded"] + 1, type="simulate")
    await reaches("job_run_seconds_count", before["runs"] + 1, type="simulate")
    ran = sample("job_run_seconds_sum", type="simulate") - before["ran"]
    assert 0.02 <= ran < 5  # the result says it ran from 30 ms before it was sent

    # The same result again is stale: nothing is counted twice.
    stale = sample("scheduler_messages_total", queue=topology.RESULTS, outcome="stale")
    await bus.publisher.publish(topology.RESULTS, job_result(message.job_id, 1))
    await reaches("scheduler_messages_total", stale + 1, queue=topology.RESULTS, outcome="stale")
    assert sample("jobs_succeeded_total", type="simulate") == before["succeeded"] + 1
    assert sample("job_run_seconds_count", type="simulate") == before["runs"] + 1


async def test_a_quick_attempt_reported_only_by_its_result_still_counts_its_queue_wait(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    wait = {"type": "simulate", "priority": "low"}
    before = sample("job_queue_wait_seconds_count", **wait)
    message = submitted(priority=1)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus, topology.READY_LOW)
    await bus.publisher.publish(topology.RESULTS, job_result(message.job_id, 1))
    await wait_status(db, message.job_id, "succeeded")
    await reaches("job_queue_wait_seconds_count", before + 1, **wait)


async def test_failures_count_by_terminality_and_the_death_by_its_reason(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    def counts() -> dict[str, float]:
        return {
            "retried": sample("jobs_failed_total", type="simulate", terminal="false"),
            "ended": sample("jobs_failed_total", type="simulate", terminal="true"),
            "max_attempts": sample("jobs_dead_total", reason="max_attempts"),
            "permanent": sample("jobs_dead_total", reason="permanent_error"),
        }

    before = counts()
    message = submitted(max_attempts=2)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(topology.RESULTS, job_result(message.job_id, 1, "failed"))
    await reaches("jobs_failed_total", before["retried"] + 1, type="simulate", terminal="false")
    assert counts()["ended"] == before["ended"]

    await next_dispatch(bus)  # the retry
    await bus.publisher.publish(topology.RESULTS, job_result(message.job_id, 2, "failed"))
    await wait_status(db, message.job_id, "dead")
    await reaches("jobs_dead_total", before["max_attempts"] + 1, reason="max_attempts")
    await reaches("jobs_failed_total", before["ended"] + 1, type="simulate", terminal="true")

    permanent = submitted(max_attempts=5)
    await bus.publisher.publish(topology.SUBMITTED, permanent)
    await next_dispatch(bus)
    error = FAILURE.model_copy(update={"kind": ErrorKind.PERMANENT})
    await bus.publisher.publish(
        topology.RESULTS, job_result(permanent.job_id, 1, "failed", error=error)
    )
    await wait_status(db, permanent.job_id, "dead")
    await reaches("jobs_dead_total", before["permanent"] + 1, reason="permanent_error")
    await reaches("jobs_failed_total", before["ended"] + 2, type="simulate", terminal="true")
    assert counts()["retried"] == before["retried"] + 1


async def test_an_attempt_whose_worker_went_silent_counts_a_lease_expiration(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    before = sample("lease_expirations_total")
    retried = sample("jobs_failed_total", type="simulate", terminal="false")
    message = submitted(max_attempts=3)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w-silent", started_at=utcnow()),
    )
    await wait_status(db, message.job_id, "running")
    retry = await next_dispatch(bus, timeout=10)  # no heartbeat: the lease runs out
    assert (retry.job_id, retry.attempt) == (message.job_id, 2)
    await reaches("lease_expirations_total", before + 1)
    await reaches("jobs_failed_total", retried + 1, type="simulate", terminal="false")


async def test_outbox_pending_is_what_the_last_relay_pass_left(db: AsyncEngine) -> None:
    """No scheduler runs here: the relay pass is called directly, with no publisher for the
    exchange, so every publish fails and the rows stay pending."""
    dispatched = sample("jobs_dispatched_total", queue=topology.READY_MEDIUM)
    rows: list[dict[str, Any]] = [
        {
            "routing_key": topology.READY_MEDIUM,
            "message_id": uuid.uuid4(),
            "message_type": "job.dispatch",
            "trace_id": "t",
            "body": b"{}",
        }
        for _ in range(3)
    ]
    async with db.begin() as connection:
        await connection.execute(insert(outbox), rows)
    assert await OutboxRelay(db, {}, limit=10, clock_slack=5.0).pass_once() == 0
    assert sample("outbox_pending", service="scheduler") == 3
    assert sample("jobs_dispatched_total", queue=topology.READY_MEDIUM) == dispatched  # unconfirmed

    async with db.begin() as connection:
        await connection.execute(delete(outbox))
    await OutboxRelay(db, {}, limit=10, clock_slack=5.0).pass_once()
    assert sample("outbox_pending", service="scheduler") == 0
