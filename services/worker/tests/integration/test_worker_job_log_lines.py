"""Handler log lines arrive with the job's id, attempt and worker (on jobs.logs, or riding
along with the job's result), also when the handler logs from a thread."""

from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from prometheus_client import REGISTRY

from jobs_common.contracts import JobLogLine
from jobs_common.topology import LOGS, RESULTS
from jobs_testing.waiting import eventually
from jobs_testing.worker_messages import Collector, Observer, make_dispatch, quick_simulate

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
    # The artifact's file name; its directory on the worker's disk is not the owner's to read.
    assert wrote.message.startswith("wrote attempt-1.png (") and wrote.message.endswith(" bytes)")
    assert "/" not in wrote.message


async def test_an_unexpected_failure_reaches_its_owner_without_traceback_or_paths(
    start_worker: Any, observer: Observer, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_bytes(b"")  # artifacts below a file: the handler's mkdir fails
    logs = results = await observer.collect(LOGS, RESULTS)
    await start_worker(artifacts_dir=blocker / "artifacts")
    job = make_dispatch("image_resize", {"imageBase64": png((8, 8)), "width": 4, "height": 4})
    await observer.publish(job)

    result = await observer.wait_result(results, job.job_id)
    assert result.outcome == "failed"
    assert result.error is not None
    assert result.error.error_class in ("NotADirectoryError", "FileExistsError")
    assert str(tmp_path) not in result.error.message
    assert result.error.message.endswith(f"'…/{job.job_id}'")

    lines = await lines_of(logs, job.job_id, 2)
    failed = lines[-1]
    assert failed.level == "warning"
    assert failed.message == f"handler failed: {result.error.error_class}: {result.error.message}"
    assert all("Traceback" not in line.message for line in lines)
    assert all(str(tmp_path) not in line.message for line in lines)
