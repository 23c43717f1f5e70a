"""Handlers written with the SDK, run by a real worker on a real broker: results checked
against a result model, RetryLater and FailPermanently, progress, a sync handler that blocks
while the worker runs other jobs, and a sync handler that polls its cancellation."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from jobs_common.contracts import ErrorKind
from jobs_common.topology import LOGS, RESULTS, RUNNING, ready_queue_for
from jobs_sdk.context import Registry
from jobs_testing.worker_messages import Observer, make_dispatch
from jobs_worker.sdk import (
    FailPermanently,
    HandlerDefinitionError,
    JobContext,
    RetryLater,
    handler,
    spec_of,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class Text(BaseModel):
    text: str = ""
    seconds: float = 0.0


class Reversed(BaseModel):
    reversed: str


@handler("acme.reverse", payload=Text, result=Reversed)
async def reverse(ctx: JobContext, payload: Text) -> dict[str, Any]:
    ctx.log.info("reversing %d characters", len(payload.text))
    await ctx.progress(50, "half way")
    return {"reversed": payload.text[::-1]}


@handler("acme.wrong_result", payload=Text, result=Reversed)
async def wrong_result(ctx: JobContext, payload: Text) -> dict[str, Any]:
    return {"reversed": 42, "extra": True}


@handler("acme.rate_limited", payload=Text)
async def rate_limited(ctx: JobContext, payload: Text) -> dict[str, Any]:
    raise RetryLater(delay_seconds=7.5, message="partner API rate limit")


@handler("acme.refused", payload=Text)
async def refused(ctx: JobContext, payload: Text) -> dict[str, Any]:
    raise FailPermanently("invoice 17 does not exist")


BLOCKING_THREADS: set[str] = set()


@handler("acme.blocking", payload=Text)
def blocking(ctx: JobContext, payload: Text) -> dict[str, Any]:
    BLOCKING_THREADS.add(threading.current_thread().name)
    time.sleep(payload.seconds)  # blocks its thread, never the event loop
    ctx.report_progress(100)
    return {"slept": payload.seconds}


NOTICED_CANCEL = threading.Event()
POLITE_STARTED = threading.Event()


@handler("acme.polite", payload=Text)
def polite(ctx: JobContext, payload: Text) -> dict[str, Any]:
    POLITE_STARTED.set()
    deadline = time.monotonic() + 20
    while not ctx.cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    if ctx.cancelled:
        NOTICED_CANCEL.set()
    return {}


@handler("acme.self_cancelling", payload=Text)
async def self_cancelling(ctx: JobContext, payload: Text) -> dict[str, Any]:
    raise asyncio.CancelledError  # e.g. a library's own timeout leaking out


def registry_of(*functions: Any) -> Registry:
    specs = [spec_of(fn) for fn in functions]
    return {spec.job_type: spec for spec in specs if spec is not None}


async def test_a_result_model_checks_what_the_handler_returns_and_progress_is_logged(
    start_worker: Any, observer: Observer
) -> None:
    results = await observer.collect(RESULTS, LOGS)
    await start_worker(registry=registry_of(reverse, wrong_result))
    good = make_dispatch("acme.reverse", {"text": "invoice"})
    bad = make_dispatch("acme.wrong_result", {})
    await observer.publish(good)
    await observer.publish(bad)
    result = await observer.wait_result(results, good.job_id)
    assert (result.outcome, result.result) == ("succeeded", {"reversed": "eciovni"})
    lines = [line.message for line in await results.log_lines(good.job_id, 2)]
    assert "reversing 7 characters" in lines and "progress 50%: half way" in lines
    failed = await observer.wait_result(results, bad.job_id)
    assert failed.error is not None
    assert (failed.error.kind, failed.error.error_class) == (ErrorKind.PERMANENT, "InvalidResult")


async def test_retry_later_carries_its_delay_and_fail_permanently_is_permanent(
    start_worker: Any, observer: Observer
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(registry=registry_of(rate_limited, refused))
    later, never = make_dispatch("acme.rate_limited", {}), make_dispatch("acme.refused", {})
    await observer.publish(later)
    await observer.publish(never)
    retry = (await observer.wait_result(results, later.job_id)).error
    assert retry is not None
    assert (retry.kind, retry.retry_after_seconds) == (ErrorKind.RETRYABLE, 7.5)
    assert retry.message == "partner API rate limit"
    permanent = (await observer.wait_result(results, never.job_id)).error
    assert permanent is not None
    assert (permanent.kind, permanent.error_class) == (ErrorKind.PERMANENT, "FailPermanently")


async def test_a_blocking_sync_handler_runs_in_the_pool_while_other_jobs_finish(
    start_worker: Any, observer: Observer
) -> None:
    results = await observer.collect(RESULTS)
    running = await observer.collect(RUNNING)
    await start_worker(registry=registry_of(blocking, reverse), heartbeat_interval=0.2)
    slow = make_dispatch("acme.blocking", {"seconds": 1.0})
    await observer.publish(slow)
    await observer.wait_running(running, slow.job_id)  # announced: it blocks its thread now
    quick = [make_dispatch("acme.reverse", {"text": str(n)}) for n in range(5)]
    for dispatch in quick:
        await observer.publish(dispatch)
    for dispatch in quick:
        assert (await observer.wait_result(results, dispatch.job_id)).outcome == "succeeded"
    assert not [r for r in results.results() if r.job_id == slow.job_id]  # still blocking
    assert (await observer.wait_result(results, slow.job_id)).result == {"slept": 1.0}
    assert BLOCKING_THREADS and all(name.startswith("handler") for name in BLOCKING_THREADS)


async def test_a_sync_handler_sees_its_cancellation(start_worker: Any, observer: Observer) -> None:
    results = await observer.collect(RESULTS)
    running = await observer.collect(RUNNING)
    await start_worker(registry=registry_of(polite), running_report_delay=0)
    dispatch = make_dispatch("acme.polite", {})
    await observer.publish(dispatch)
    await observer.wait_running(running, dispatch.job_id)
    # Running in its thread (a cancel that came before would stop it before it starts).
    assert await asyncio.to_thread(POLITE_STARTED.wait, 20)
    await observer.cancel(dispatch.job_id, dispatch.attempt, "cancel requested by a person")
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "cancelled"
    assert await asyncio.to_thread(NOTICED_CANCEL.wait, 20)  # the thread stopped by itself


OVERRUN_NOTICED = threading.Event()


@handler("acme.overrun", payload=Text)
def overrun(ctx: JobContext, payload: Text) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while not ctx.cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    if ctx.cancelled:
        OVERRUN_NOTICED.set()
    return {}


async def test_a_timeout_tells_a_sync_handler_to_stop(
    start_worker: Any, observer: Observer
) -> None:
    """The attempt times out after 1 s: reported as a timeout, and the handler's thread, left
    to finish alone, sees ctx.cancelled and stops (it kept a pool thread forever before)."""
    results = await observer.collect(RESULTS)
    await start_worker(registry=registry_of(overrun))
    dispatch = make_dispatch("acme.overrun", {}, timeout_seconds=1)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.error is not None and result.error.error_class == "JobTimeout"
    assert await asyncio.to_thread(OVERRUN_NOTICED.wait, 5)


@handler("acme.tidy", payload=Text, timeout_seconds=30, soft_timeout_seconds=1)
async def tidy(ctx: JobContext, payload: Text) -> dict[str, Any]:
    started = time.monotonic()
    await ctx.wait_cancelled()
    return {"stoppedAfter": time.monotonic() - started, "timeLeft": ctx.time_left()}


async def test_a_soft_timeout_asks_the_handler_to_stop_and_it_finishes_cleanly(
    start_worker: Any, observer: Observer
) -> None:
    """soft_timeout_seconds=1 under a 30 s timeout: ctx.cancelled turns True after about a
    second, the handler returns, and the attempt succeeds with what it returned; time_left()
    counts down to the hard timeout."""
    results = await observer.collect(RESULTS)
    await start_worker(registry=registry_of(tidy))
    dispatch = make_dispatch("acme.tidy", {}, timeout_seconds=30)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded" and result.result is not None
    assert 0.9 <= result.result["stoppedAfter"] < 5
    assert 25 < result.result["timeLeft"] < 29.2


def test_a_soft_timeout_must_come_before_the_timeout() -> None:
    with pytest.raises(HandlerDefinitionError, match="soft_timeout_seconds"):
        handler("acme.bad", payload=Text, timeout_seconds=10, soft_timeout_seconds=10)


class WordsV2(BaseModel):
    words: list[str]


@handler("acme.changed", payload=WordsV2)
async def changed(ctx: JobContext, payload: WordsV2) -> dict[str, Any]:
    return {"count": len(payload.words)}


async def test_a_job_of_the_old_shape_fails_permanently_once_its_type_changed_incompatibly(
    start_worker: Any, observer: Observer
) -> None:
    """docs/submission.md, "The job type registry": a job accepted under the old schema,
    run by a worker whose model changed, fails at once as InvalidPayload (dead, requeue-able
    with an edited payload), never retried in a loop; the new shape runs."""
    results = await observer.collect(RESULTS)
    await start_worker(registry=registry_of(changed))
    old, new = (
        make_dispatch("acme.changed", {"text": "accepted before the change"}),
        make_dispatch("acme.changed", {"words": ["a", "b"]}),
    )
    await observer.publish(old)
    await observer.publish(new)
    failed = await observer.wait_result(results, old.job_id)
    assert failed.error is not None
    assert (failed.error.kind, failed.error.error_class) == (ErrorKind.PERMANENT, "InvalidPayload")
    assert "words" in failed.error.message
    assert (await observer.wait_result(results, new.job_id)).result == {"count": 2}


async def test_a_handler_s_own_cancelled_error_fails_the_attempt_and_acks_it(
    start_worker: Any, observer: Observer
) -> None:
    """No cancel asked, the handler raises ``asyncio.CancelledError``: the attempt is a
    retryable failure, reported, and its delivery acked (nothing returns to the ready queue
    when the worker stops); the worker goes on with the next job."""
    results = await observer.collect(RESULTS)
    runtime = await start_worker(registry=registry_of(self_cancelling, reverse))
    dispatch = make_dispatch("acme.self_cancelling", {})
    after = make_dispatch("acme.reverse", {"text": "ok"})
    await observer.publish(dispatch)
    await observer.publish(after)
    failed = await observer.wait_result(results, dispatch.job_id)
    assert failed.outcome == "failed" and failed.error is not None
    assert (failed.error.kind, failed.error.error_class) == (ErrorKind.RETRYABLE, "CancelledError")
    assert (await observer.wait_result(results, after.job_id)).outcome == "succeeded"
    await runtime.stop()
    assert await observer.message_count(ready_queue_for(dispatch.priority)) == 0
