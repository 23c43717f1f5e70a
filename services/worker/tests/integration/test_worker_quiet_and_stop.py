"""An admin's quiet and stop (``WorkerControl`` on the control queue): a quiet worker takes no
new job, hands back at once what it received and had not started (another worker runs it),
finishes what it runs and says ``quiet`` in its heartbeat; stop is quiet, then the runtime
asks to exit once its jobs have finished."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from jobs_common.contracts import (
    ClaimVerdict,
    JobRunning,
    WorkerControl,
    WorkerHeartbeat,
    parse_message,
    utcnow,
)
from jobs_common.rabbit import Publisher
from jobs_common.topology import (
    CONTROL_CLAIM,
    CONTROL_WORKER,
    EVENTS_EXCHANGE,
    HEARTBEAT,
    READY_LOW,
    READY_MEDIUM,
    RESULTS,
    RUNNING,
)
from jobs_testing.worker_messages import Observer, make_dispatch, quick_simulate, until
from jobs_worker.sdk import JobContext, handler, spec_of

pytestmark = pytest.mark.integration


async def command(observer: Observer, worker_id: str, what: str) -> None:
    events = await observer.bus.exchange(EVENTS_EXCHANGE)
    message = WorkerControl(
        worker_id=worker_id, command=what, requested_by="admin@test.com", requested_at=utcnow()
    )
    await Publisher(events).publish(CONTROL_WORKER, message)


def heartbeats(messages: list[Any], worker_id: str) -> list[WorkerHeartbeat]:
    beats = [parse_message(WorkerHeartbeat, m.body) for m in messages]
    return [beat for beat in beats if beat.worker_id == worker_id]


class Pause(BaseModel):
    seconds: float = 0.0


@handler("acme.hog", payload=Pause, slots=3)
async def hog(ctx: JobContext, payload: Pause) -> dict[str, Any]:
    await asyncio.sleep(payload.seconds)
    return {}


@handler("acme.quick", payload=Pause)
async def quick(ctx: JobContext, payload: Pause) -> dict[str, Any]:
    return {}


REGISTRY = {spec.job_type: spec for spec in (spec_of(hog), spec_of(quick)) if spec}


async def granting(observer: Observer) -> list[JobRunning]:
    """Stand in for the scheduler on jobs.running: every JobRunning is recorded, and a claim
    (a handed-back delivery comes back ``redelivered``) of an attempt never started is
    granted, as the scheduler grants it."""
    seen: list[JobRunning] = []
    events = Publisher(await observer.bus.exchange(EVENTS_EXCHANGE))
    channel = await observer.bus.connection.channel()

    async def on_message(message: Any) -> None:
        await message.ack()
        running = parse_message(JobRunning, message.body)
        seen.append(running)
        if running.redelivered:
            verdict = ClaimVerdict(
                job_id=running.job_id,
                attempt=running.attempt,
                worker_id=running.worker_id,
                verdict="run",
                reason="never started",
            )
            await events.publish(CONTROL_CLAIM, verdict)

    await (await channel.get_queue(RUNNING)).consume(on_message)
    return seen


async def test_a_quiet_worker_hands_back_what_it_has_not_started_and_finishes_the_rest(
    start_worker: Any, observer: Observer
) -> None:
    """The long job holds every slot (3 of 3): the two quick ones the worker received wait for
    a slot, unstarted, until the worker goes quiet and hands them back."""
    running = await granting(observer)
    results = await observer.collect(RESULTS)
    beats = await observer.collect(HEARTBEAT)
    one_each = {"prefetch_high": 1, "prefetch_medium": 1, "prefetch_low": 1}
    quiet = await start_worker(registry=REGISTRY, **one_each)
    long = make_dispatch("acme.hog", {"seconds": 1.5}, priority=3)
    await observer.publish(long)
    async with asyncio.timeout(10):
        await until(lambda: any(r.job_id == long.job_id for r in running))
    waiting = [make_dispatch("acme.quick", {}, priority=p) for p in (2, 1)]
    for dispatch in waiting:
        await observer.publish(dispatch)
    async with asyncio.timeout(10):
        await until(lambda: quiet.in_flight == 3)  # both received, waiting for the slots

    await command(observer, "another-worker", "quiet")  # not this one's: nothing changes
    await command(observer, quiet.worker_id, "quiet")
    async with asyncio.timeout(10):
        await observer.wait_for_count(READY_MEDIUM, 1)  # handed back while the long job runs
        await observer.wait_for_count(READY_LOW, 1)
        await beats.wait_for(lambda m: any(b.quiet for b in heartbeats([m], quiet.worker_id)))
    assert quiet.quiet_mode and quiet.in_flight == 1
    # No ready consumer on purpose: not a broken part its liveness watchdog would end it for.
    checks = await quiet.ready_checks()
    assert checks == {"amqp": True, "consumers:control": True}
    assert (await observer.wait_result(results, long.job_id)).outcome == "succeeded"
    assert await observer.message_count(READY_MEDIUM) == 1  # nothing here consumes it now

    other = await start_worker(registry=REGISTRY)  # another worker runs what was handed back
    for dispatch in waiting:
        result = await observer.wait_result(results, dispatch.job_id)
        assert result.worker_id == other.worker_id
    assert quiet.in_flight == 0
    assert not quiet.exit_requested.is_set()  # quiet is not stop: it stays, taking nothing
    assert quiet.heartbeat is not None
    quiet.heartbeat.poke()
    async with asyncio.timeout(10):
        await beats.wait_for(
            lambda m: any(b.processed == 1 for b in heartbeats([m], quiet.worker_id))
        )


async def test_stop_exits_after_the_current_job(start_worker: Any, observer: Observer) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    beats = await observer.collect(HEARTBEAT)
    runtime = await start_worker(drain_timeout=0.1)  # stop waits for its jobs, not this
    slow = make_dispatch(
        "simulate", quick_simulate(immediateFailureRate=0, minSeconds=1, maxSeconds=1)
    )
    await observer.publish(slow)
    await observer.wait_running(running, slow.job_id)

    await command(observer, runtime.worker_id, "stop")
    async with asyncio.timeout(10):
        await beats.wait_for(
            lambda m: any(b.stopping and b.quiet for b in heartbeats([m], runtime.worker_id))
        )
    assert not runtime.exit_requested.is_set()  # the job still runs
    async with asyncio.timeout(10):
        await runtime.exit_requested.wait()
    assert results.results()[0].job_id == slow.job_id
    assert results.results()[0].outcome == "succeeded"
    assert runtime.in_flight == 0
