"""Graceful shutdown: stop consuming, let running jobs publish and ack, abandon the rest."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jobs_common.topology import READY_HIGH, RESULTS, RUNNING
from jobs_testing.worker_messages import Observer, make_dispatch, quick_simulate

pytestmark = pytest.mark.integration


async def consumer_count(observer: Observer, queue: str) -> int:
    channel = await observer.bus.connection.channel()
    try:
        declared = await (await channel.get_queue(queue)).declare()
        return declared.consumer_count or 0
    finally:
        await channel.close()


async def test_running_job_finishes_during_shutdown(start_worker: Any, observer: Observer) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker(drain_timeout=20)
    slow = make_dispatch("simulate", quick_simulate(minSeconds=1, maxSeconds=1))
    await observer.publish(slow)
    await observer.wait_running(running, slow.job_id)
    assert runtime.in_flight == 1

    stopping = asyncio.create_task(runtime.stop())
    async with asyncio.timeout(10):
        while True:  # the broker has no event for this: poll it
            if await consumer_count(observer, READY_HIGH) == 0:
                break
            await asyncio.sleep(0.02)
    assert not stopping.done()  # still draining the slow job
    late = make_dispatch("simulate", quick_simulate())
    await observer.publish(late)

    async with asyncio.timeout(20):
        await stopping
    result = await observer.wait_result(results, slow.job_id)
    assert result.outcome == "succeeded"
    # The slow job was acked; the late one was never consumed and still waits.
    assert await observer.message_count(READY_HIGH) == 1
    assert [m for m in running.messages if m.body and str(late.job_id).encode() in m.body] == []


async def test_job_past_the_drain_timeout_is_left_for_redelivery(
    start_worker: Any, observer: Observer
) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker(drain_timeout=0.2)
    stuck = make_dispatch(
        "simulate", quick_simulate(minSeconds=60, maxSeconds=60), timeout_seconds=120
    )
    await observer.publish(stuck)
    await observer.wait_running(running, stuck.job_id)

    async with asyncio.timeout(10):
        await runtime.stop()
        await observer.wait_for_count(READY_HIGH, 1)  # unacked -> back on the queue
    assert results.messages == []
    assert runtime.in_flight == 0

    # Another worker gets the same attempt again.
    successor = await start_worker(drain_timeout=0.1)
    async with asyncio.timeout(20):
        await running.wait_for(lambda m: str(stuck.job_id).encode() in m.body, count=2)
    workers = [m.body for m in running.messages]
    assert successor.worker_id.encode() in workers[1]
