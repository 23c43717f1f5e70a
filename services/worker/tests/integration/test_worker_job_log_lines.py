"""Handler log lines arrive with the job's id, attempt and worker (on jobs.logs, or riding
along with the job's result), also when the handler logs from a thread."""

from __future__ import annotations

import asyncio
import base64
import io
from typing import Any

import pytest
from PIL import Image
from prometheus_client import REGISTRY

from jobs_common.contracts import JobLogLine
from jobs_common.testing.waiting import eventually
from jobs_common.topology import LOGS, RESULTS
from jobs_worker.testing import Collector, Observer, make_dispatch, quick_simulate

pytestmark = pytest.mark.integration


async def lines_of(logs: Collector, job_id: Any, count: int) -> list[JobLogLine]:
    async with asyncio.timeout(20):
        return await logs.log_lines(job_id, count)


def published() -> float:
    return REGISTRY.get_sample_value("worker_job_log_lines_published_total") or 0.0


async def test_simulate_log_lines_arrive_in_order(start_worker: Any, observer: Observer) -> None:
    logs = results = await observer.collect(LOGS, RESULTS)
    runtime = await start_worker()
    before = published()
    job = make_dispatch("simulate", quick_simulate(minSeconds=0.02, maxSeconds=0.02), attempt=2)
    await observer.publish(job)
    assert (await observer.wait_result(results, job.job_id)).outcome == "succeeded"

    lines = await lines_of(logs, job.job_id, 2)
    assert [line.message for line in lines] == ["sleeping 0.020 s", "worked 0.020 s, succeeded"]
    for line in lines:
        assert (line.attempt, line.worker_id, line.level) == (2, runtime.worker_id, "info")
        assert line.trace_id == job.trace_id
    assert lines[0].at <= lines[1].at

    # Counted once the broker confirmed the message, which may be after it was delivered.
    async def counted() -> bool:
        return published() >= before + 2

    await eventually(counted, what="both lines counted")


async def test_a_failing_handler_ships_its_failure(start_worker: Any, observer: Observer) -> None:
    logs = await observer.collect(LOGS, RESULTS)
    await start_worker()
    job = make_dispatch("simulate", quick_simulate(failureRate=1))
    await observer.publish(job)
    lines = await lines_of(logs, job.job_id, 3)
    assert lines[-1].level == "warning"
    assert lines[-1].message.startswith("handler failed: SimulatedFailure: simulated failure")


def png(size: tuple[int, int]) -> str:
    out = io.BytesIO()
    Image.new("RGB", size, color=(10, 200, 10)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_lines_logged_in_a_thread_arrive(start_worker: Any, observer: Observer) -> None:
    logs = await observer.collect(LOGS, RESULTS)
    await start_worker()
    job = make_dispatch("image_resize", {"imageBase64": png((64, 48)), "width": 16, "height": 12})
    await observer.publish(job)
    decoded, wrote = await lines_of(logs, job.job_id, 2)
    assert decoded.message == "decoded 64x48 PNG, resized to 16x12 png"
    assert wrote.message.startswith("wrote ") and wrote.message.endswith(" bytes)")
    assert f"{job.job_id}/attempt-1.png" in wrote.message
