"""A redelivered ready message runs only when the scheduler grants its claim (issue 31).

The test plays the scheduler: it reads the claims (``JobRunning`` with ``redelivered``) on
jobs.running and answers with ``ClaimVerdict`` on the control exchange. The redelivery is a
real one: the test takes the ready message on a channel of its own and closes that channel
without acking, as a worker whose connection was cut would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from jobs_common.contracts import (
    COPY_HEADER,
    ClaimAnswer,
    ClaimVerdict,
    JobDispatch,
    JobRunning,
    utcnow,
)
from jobs_common.rabbit import Outgoing, Publisher, amqp_message
from jobs_common.topology import CONTROL_CLAIM, EVENTS_EXCHANGE, READY_HIGH, RESULTS, RUNNING
from jobs_testing.waiting import eventually
from jobs_testing.worker_messages import Observer, make_dispatch, parse_message, quick_simulate
from jobs_worker.sdk import JobContext, handler, spec_of

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def redelivered(observer: Observer, dispatch: JobDispatch) -> None:
    """Publish ``dispatch`` and take it back unacked: the broker redelivers it."""
    await observer.publish(dispatch)
    channel = await observer.bus.connection.channel()
    queue = await channel.get_queue(READY_HIGH)
    message = await eventually(
        lambda: queue.get(no_ack=False, fail=False), what="the ready message", timeout=10
    )
    assert not message.redelivered
    await channel.close()  # unacked: requeued, redelivered=True from now on


async def answering(observer: Observer, verdicts: Sequence[ClaimAnswer]) -> list[JobRunning]:
    """Answer each claim on jobs.running with the next of ``verdicts`` (the last repeats);
    returns the claims seen (the list fills while the caller waits)."""
    claims: list[JobRunning] = []
    events = Publisher(await observer.bus.exchange(EVENTS_EXCHANGE))
    channel = await observer.bus.connection.channel()
    queue = await channel.get_queue(RUNNING)

    async def on_message(message: Any) -> None:
        await message.ack()
        running = parse_message(JobRunning, message.body)
        if not running.redelivered:
            claims.append(running)  # not a claim: counted, never answered
            return
        claims.append(running)
        asked = sum(1 for c in claims if c.redelivered)
        verdict = verdicts[min(asked, len(verdicts)) - 1]
        await events.publish(
            CONTROL_CLAIM,
            ClaimVerdict(
                job_id=running.job_id,
                attempt=running.attempt,
                worker_id=running.worker_id,
                verdict=verdict,
                reason="as the test says",
                retry_after=0.2 if verdict == "wait" else None,
            ),
        )

    await queue.consume(on_message)
    return claims


async def test_a_redelivered_copy_the_scheduler_skips_never_runs(
    start_worker: Any, observer: Observer
) -> None:
    """Another worker still runs the attempt: wait, wait, then skip (it finished there).
    The handler never runs here, no result is published, the copy is acked."""
    results = await observer.collect(RESULTS)
    claims = await answering(observer, ["wait", "wait", "skip"])
    dispatch = make_dispatch("simulate", quick_simulate(), priority=3)
    await redelivered(observer, dispatch)
    runtime = await start_worker()
    async with asyncio.timeout(20):
        await observer.wait_for_count(READY_HIGH, 0)

    async def settled() -> bool:
        return runtime.in_flight == 0

    await eventually(settled, what="the copy settled")
    assert [c.redelivered for c in claims] == [True, True, True]
    assert len({c.claim_since for c in claims}) == 1  # every ask names the first
    assert results.results() == []
    assert runtime.active.reported((dispatch.job_id, dispatch.attempt)) is False


async def test_a_redelivered_copy_the_scheduler_grants_runs_once(
    start_worker: Any, observer: Observer
) -> None:
    results = await observer.collect(RESULTS)
    claims = await answering(observer, ["wait", "run"])
    dispatch = make_dispatch("simulate", quick_simulate(), priority=3)
    await redelivered(observer, dispatch)
    runtime = await start_worker()
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded"
    # Two asks, and no JobRunning besides them: the granted claim recorded the start.
    assert [c.redelivered for c in claims] == [True, True]
    async with asyncio.timeout(10):
        await observer.wait_for_count(READY_HIGH, 0)
    assert runtime.active.reported((dispatch.job_id, dispatch.attempt))


async def test_a_relay_copy_is_claimed_from_its_dispatch_and_a_stale_first_delivery_at_once(
    start_worker: Any, observer: Observer
) -> None:
    """A copy (x-jobs-copy) asks with its dispatch time; a first delivery that waited past
    its fresh_until asks with none (it need not wait); a fresh one does not ask."""
    results = await observer.collect(RESULTS)
    claims = await answering(observer, ["run"])
    copy = make_dispatch("simulate", quick_simulate(), priority=3)
    stale = make_dispatch("simulate", quick_simulate(), priority=3).model_copy(
        update={"fresh_until": utcnow() - timedelta(seconds=1)}
    )
    fresh = make_dispatch("simulate", quick_simulate(), priority=3).model_copy(
        update={"fresh_until": utcnow() + timedelta(minutes=1)}
    )
    marked = amqp_message(copy)
    marked.headers = {**(marked.headers or {}), COPY_HEADER: 1}
    await observer.bus.publisher.publish_raw(Outgoing(READY_HIGH, marked))
    await observer.publish(stale)
    await observer.publish(fresh)
    await start_worker()
    for dispatch in (copy, stale, fresh):
        assert (await observer.wait_result(results, dispatch.job_id)).outcome == "succeeded"
    asked = {c.job_id: c for c in claims if c.redelivered}
    assert set(asked) == {copy.job_id, stale.job_id}
    assert asked[copy.job_id].claim_since == copy.dispatched_at
    assert asked[stale.job_id].claim_since is None


class Pause(BaseModel):
    seconds: float = 0.0


@handler("acme.hog", payload=Pause, slots=3)
async def hog(ctx: JobContext, payload: Pause) -> dict[str, Any]:
    await asyncio.sleep(payload.seconds)
    return {}


@handler("acme.quick", payload=Pause)
async def quick(ctx: JobContext, payload: Pause) -> dict[str, Any]:
    return {}


async def test_a_delivery_fresh_when_it_came_asks_when_it_waited_for_a_slot_past_fresh(
    start_worker: Any, observer: Observer
) -> None:
    """Every slot held by a long job: the next delivery waits for one past its fresh_until,
    when a relay copy of it may run elsewhere; it asks before it runs."""
    results = await observer.collect(RESULTS)
    claims = await answering(observer, ["run"])
    registry = {spec.job_type: spec for spec in (spec_of(hog), spec_of(quick)) if spec}
    await start_worker(registry=registry, prefetch_high=1, prefetch_medium=1, prefetch_low=1)
    long = make_dispatch("acme.hog", {"seconds": 2.0}, priority=3)
    await observer.publish(long)
    await eventually(lambda: _running(claims, long.job_id), what="the long job running")
    late = make_dispatch("acme.quick", {}, priority=2).model_copy(
        update={"fresh_until": utcnow() + timedelta(seconds=0.5)}
    )
    await observer.publish(late)
    for dispatch in (long, late):
        assert (await observer.wait_result(results, dispatch.job_id)).outcome == "succeeded"
    asked = [c for c in claims if c.redelivered]
    assert [(c.job_id, c.claim_since) for c in asked] == [(late.job_id, None)]


async def _running(claims: list[JobRunning], job_id: Any) -> bool:
    return any(c.job_id == job_id for c in claims)
