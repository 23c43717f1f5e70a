"""A dispatch on a ready queue -> JobRunning and JobResult published, the delivery acked."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import os
from pathlib import Path
from typing import Any

import aio_pika
import orjson
import pytest
from PIL import Image
from prometheus_client import REGISTRY

from jobs_common.contracts import ErrorKind
from jobs_common.topology import (
    DEAD,
    READY_HIGH,
    READY_LOW,
    READY_MEDIUM,
    RESULTS,
    RUNNING,
    queue_arguments,
)
from jobs_sdk.context import JobContext, Registry
from jobs_testing.worker_messages import Observer, job_of, make_dispatch, quick_simulate
from jobs_worker.handlers.payloads import SimulatePayload
from jobs_worker.sdk import handler, spec_of

pytestmark = pytest.mark.integration


def finished(job_type: str, outcome: str, kind: str) -> float:
    value = REGISTRY.get_sample_value(
        "worker_jobs_finished_total",
        {"job_type": job_type, "outcome": outcome, "error_kind": kind},
    )
    return value or 0.0


async def test_simulate_job_runs_reports_and_is_acked(
    start_worker: Any, observer: Observer
) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker()
    before = finished("simulate", "succeeded", "none")
    dispatch = make_dispatch("simulate", quick_simulate(), priority=2)
    await observer.publish(dispatch)

    started = await observer.wait_running(running, dispatch.job_id)
    result = await observer.wait_result(results, dispatch.job_id)
    assert started.worker_id == runtime.worker_id == result.worker_id
    assert (started.attempt, result.attempt) == (1, 1)
    assert result.outcome == "succeeded"
    assert result.error is None
    assert result.result == {"durationSeconds": 0.0}
    assert result.trace_id == dispatch.trace_id
    assert result.started_at == started.started_at <= result.finished_at

    await runtime.stop()  # an unacked delivery would go back to its queue now
    assert finished("simulate", "succeeded", "none") == before + 1
    assert await observer.message_count(READY_MEDIUM) == 0


async def test_a_second_delivery_of_a_finished_attempt_is_acked_without_running_it(
    start_worker: Any, observer: Observer
) -> None:
    """The ack of a finished attempt can be lost with its connection; the broker then
    delivers the attempt again. The worker remembers what it reported and does not run it
    twice."""
    results = await observer.collect(RESULTS)
    runtime = await start_worker()
    before = finished("simulate", "succeeded", "none")
    dispatch = make_dispatch("simulate", quick_simulate(), priority=2)
    await observer.publish(dispatch)
    await observer.wait_result(results, dispatch.job_id)
    await observer.publish(dispatch)  # the same attempt once more
    async with asyncio.timeout(10):
        await observer.wait_for_count(READY_MEDIUM, 0)
    await asyncio.sleep(0.3)
    await runtime.stop()
    assert finished("simulate", "succeeded", "none") == before + 1  # the handler ran once
    assert len([r for r in results.results() if r.job_id == dispatch.job_id]) == 1
    assert await observer.message_count(READY_MEDIUM) == 0  # and the copy was acked


@pytest.mark.parametrize(
    ("job_type", "payload", "timeout", "kind", "error_class"),
    [
        (
            "simulate",
            quick_simulate(immediateFailureRate=1),
            30,
            ErrorKind.RETRYABLE,
            "SimulatedFailure",
        ),
        ("simulate", quick_simulate(failureRate=1), 30, ErrorKind.RETRYABLE, "SimulatedFailure"),
        ("simulate", {"minSeconds": 5, "maxSeconds": 1}, 30, ErrorKind.PERMANENT, "InvalidPayload"),
        (
            "simulate",
            quick_simulate(minSeconds=30, maxSeconds=30),
            1,
            ErrorKind.TIMEOUT,
            "JobTimeout",
        ),
    ],
)
async def test_failures_are_reported_with_their_kind(
    start_worker: Any,
    observer: Observer,
    job_type: str,
    payload: dict[str, Any],
    timeout: int,
    kind: ErrorKind,
    error_class: str,
) -> None:
    results = await observer.collect(RESULTS)
    runtime = await start_worker()
    dispatch = make_dispatch(job_type, payload, priority=1, timeout_seconds=timeout)
    await observer.publish(dispatch)

    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "failed"
    assert result.result is None
    assert result.error is not None
    assert (result.error.kind, result.error.error_class) == (kind, error_class)
    await runtime.stop()
    assert await observer.message_count(READY_LOW) == 0


async def test_a_result_that_is_no_json_object_fails_the_attempt(
    start_worker: Any, observer: Observer
) -> None:
    """A handler whose result is not an object: the attempt fails permanently, reported and
    acked (the result model refused it after the handler ran, and the delivery stayed
    unreported and unacked on the channel)."""

    @handler("returns_list", payload=SimulatePayload)
    async def returns_a_list(ctx: JobContext, payload: SimulatePayload) -> Any:
        return [1, 2, 3]

    results = await observer.collect(RESULTS)
    spec = spec_of(returns_a_list)
    assert spec is not None
    registry: Registry = {"returns_list": spec}
    runtime = await start_worker(registry=registry)
    dispatch = make_dispatch("returns_list", quick_simulate(), priority=3)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "failed"
    assert result.error is not None
    assert (result.error.kind, result.error.error_class) == (ErrorKind.PERMANENT, "InvalidResult")
    await runtime.stop()  # an unacked delivery would go back to its queue now
    assert await observer.message_count(READY_HIGH) == 0


async def test_poison_messages_are_dead_lettered(start_worker: Any, observer: Observer) -> None:
    dead = await observer.collect(DEAD)
    results = await observer.collect(RESULTS)
    await start_worker()
    future_version = orjson.loads(make_dispatch("simulate", quick_simulate()).to_json())
    future_version["v"] = 2
    bodies = [
        b"not json at all",
        orjson.dumps({"type": "job.dispatch"}),
        orjson.dumps(future_version),
    ]
    for body in bodies:
        await observer.bus.topology.jobs.publish(
            aio_pika.Message(body, message_id="poison"), routing_key=READY_HIGH, mandatory=True
        )

    async with asyncio.timeout(20):
        arrived = await dead.wait_for(lambda m: True, count=3)
    assert sorted(m.body for m in arrived) == sorted(bodies)
    for message in arrived:
        (death,) = message.headers["x-death"]
        assert death["reason"] == "rejected"
        assert death["queue"] == READY_HIGH
    assert results.messages == []


def png(size: tuple[int, int]) -> str:
    out = io.BytesIO()
    Image.new("RGB", size, (10, 200, 10)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_image_resize_writes_an_artifact(
    start_worker: Any, observer: Observer, tmp_path: Path
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker()
    dispatch = make_dispatch(
        "image_resize", {"imageBase64": png((80, 60)), "width": 40, "height": 30, "format": "webp"}
    )
    await observer.publish(dispatch)

    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded", result.error
    assert result.result is not None
    # The result names the file under the artifacts directory, not the worker's path of it.
    assert result.result["artifact"] == f"{dispatch.job_id}/attempt-1.webp"
    assert "path" not in result.result
    path = Path(os.environ["WORKER_ARTIFACTS_DIR"]) / result.result["artifact"]
    data = await asyncio.to_thread(path.read_bytes)
    assert result.result["bytes"] == len(data)
    assert result.result["sha256"] == hashlib.sha256(data).hexdigest()
    assert (result.result["width"], result.result["height"], result.result["format"]) == (
        40,
        30,
        "webp",
    )
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (40, 30)
    assert [p.name for p in path.parent.iterdir()] == ["attempt-1.webp"]  # no temp file left


async def test_corrupt_image_fails_permanently(start_worker: Any, observer: Observer) -> None:
    results = await observer.collect(RESULTS)
    await start_worker()
    corrupt = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 50).decode()
    dispatch = make_dispatch("image_resize", {"imageBase64": corrupt, "width": 4, "height": 4})
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.error is not None
    assert (result.error.kind, result.error.error_class) == (
        ErrorKind.PERMANENT,
        "ImageDecodeError",
    )


async def test_an_unconfirmed_result_is_kept_and_published_again_never_re_run(
    start_worker: Any, observer: Observer
) -> None:
    """With jobs.results gone the result publish is returned unroutable: the worker keeps
    the outcome and publishes it again until the broker confirms it; the handler runs once
    and the delivery is acked then (issue 31: a computed result is never thrown away)."""
    running = await observer.collect(RUNNING)
    runtime = await start_worker(running_report_delay=0, requeue_pause=0.1)
    channel = observer.bus.channel
    await channel.queue_delete(RESULTS)
    dispatch = make_dispatch("simulate", quick_simulate())
    await observer.publish(dispatch)

    async with asyncio.timeout(20):
        await running.wait_for(lambda m: job_of(m) == str(dispatch.job_id), count=1)
    await asyncio.sleep(2)  # several failed publishes of the result meanwhile
    assert runtime.active.get((dispatch.job_id, dispatch.attempt)) is not None
    assert (dispatch.job_id, dispatch.attempt) in {
        (job_id, attempt) for job_id, attempt, _ in runtime.active.leased()
    }  # the heartbeat keeps its lease while the result waits

    queue = await channel.declare_queue(RESULTS, durable=True, arguments=queue_arguments(RESULTS))
    await queue.bind(observer.bus.topology.jobs, routing_key=RESULTS)
    results = await observer.collect(RESULTS)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded"
    await runtime.stop()
    assert await observer.message_count(READY_HIGH) == 0
    assert len([m for m in running.messages if job_of(m) == str(dispatch.job_id)]) == 1


async def test_run_until_idle_processes_everything_queued(
    start_worker: Any, observer: Observer
) -> None:
    results = await observer.collect(RESULTS)
    dispatches = [
        make_dispatch("simulate", quick_simulate(maxSeconds=0.2, seed=i), priority=1 + i % 3)
        for i in range(12)
    ]
    for dispatch in dispatches:
        await observer.publish(dispatch)
    runtime = await start_worker(prefetch_low=1, prefetch_medium=1, prefetch_high=1)
    async with asyncio.timeout(30):
        await runtime.run_until_idle()
    assert runtime.in_flight == 0
    for name in (READY_HIGH, READY_MEDIUM, READY_LOW):
        assert await observer.message_count(name) == 0
    async with asyncio.timeout(10):  # results, not messages: several may share one message
        for dispatch in dispatches:
            await results.wait_results(dispatch.job_id)
    assert {str(r.job_id) for r in results.results()} == {str(d.job_id) for d in dispatches}


async def test_a_type_this_worker_does_not_serve_is_handed_back_never_failed(
    start_worker: Any, observer: Observer
) -> None:
    """Issue 31 point 4: a deploy reached some workers of the queue first. The worker hands
    the attempt back (``unserved``) without running anything and acks the delivery; the
    scheduler sends it where a live worker serves the type."""
    results = await observer.collect(RESULTS)
    running = await observer.collect(RUNNING)
    runtime = await start_worker()
    dispatch = make_dispatch("acc.reverse", {"text": "x"}, priority=1)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert (result.outcome, result.attempt, result.worker_id) == (
        "unserved",
        1,
        runtime.worker_id,
    )
    assert result.error is not None and result.error.error_class == "UnservedJobType"
    async with asyncio.timeout(10):
        await observer.wait_for_count(READY_LOW, 0)
    assert [m for m in running.messages if job_of(m) == str(dispatch.job_id)] == []
