"""A delivery whose reports the broker keeps refusing is handed back a bounded number of times,
then rejected to jobs.dead (where the scheduler decides), never requeued forever."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import REGISTRY

from jobs_common.topology import DEAD, READY_HIGH, RUNNING
from jobs_testing.worker_messages import Observer, job_of, make_dispatch, quick_simulate

pytestmark = pytest.mark.integration


def sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def counters(message_type: str) -> dict[str, float]:
    return {
        "publish_failures": sample("worker_publish_failures_total", {"message_type": message_type}),
        "requeue": sample(
            "jobs_deliveries_settled_total", {"queue": READY_HIGH, "action": "requeue"}
        ),
        "requeue_limit": sample(
            "jobs_deliveries_settled_total", {"queue": READY_HIGH, "action": "requeue_limit"}
        ),
        "started": sample("jobs_started_total", {"type": "simulate"}),
    }


# JobRunning refused: the handler never starts; the redeliveries' claims (JobRunning too) are
# refused as well. (A refused JobResult is kept and published again, never handed back:
# test_worker_pipeline.)
@pytest.mark.parametrize(("refused_queue", "message_type", "runs"), [(RUNNING, "job.running", 0)])
async def test_a_delivery_whose_report_is_never_confirmed_is_dead_lettered_after_the_limit(
    start_worker: Any, observer: Observer, refused_queue: str, message_type: str, runs: int
) -> None:
    dead = await observer.collect(DEAD)
    await start_worker(max_requeues=2, requeue_pause=0.01, requeue_pause_max=0.02)
    # A real refusal: with the queue gone, the broker returns every publish to it as
    # unroutable (mandatory), so the publish is never confirmed.
    channel = await observer.bus.connection.channel()
    await channel.queue_delete(refused_queue)
    await channel.close()
    before = counters(message_type)
    dispatch = make_dispatch("simulate", quick_simulate(), priority=3)
    await observer.publish(dispatch)

    async with asyncio.timeout(20):
        (letter,) = await dead.wait_for(lambda m: job_of(m) == str(dispatch.job_id))

    deaths = (letter.headers or {}).get("x-death")
    assert isinstance(deaths, list) and isinstance(deaths[0], dict)
    assert (deaths[0]["reason"], deaths[0]["queue"]) == ("rejected", READY_HIGH)
    after = counters(message_type)
    # Delivered once, handed back max_requeues (2) times, then rejected: 3 refused publishes.
    assert {k: after[k] - before[k] for k in after} == {
        "publish_failures": 3,
        "requeue": 2,
        "requeue_limit": 1,
        "started": runs,
    }
    assert await observer.message_count(READY_HIGH) == 0
