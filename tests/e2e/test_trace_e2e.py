"""One job followed through the logs by its trace id: the gateway binds it (the client's
X-Trace-Id, or one it makes and answers) and forwards it, the submission service records it on
the job, the scheduler writes one line per transaction that moved the job
(jobs_scheduler.adapters.job_log) and the worker binds it with the job id and attempt while it
runs the delivery."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from jobs_testing.stack import Stack

from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

FAST_SUCCESS = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.05}


def json_lines(path: Path | None) -> list[dict[str, Any]]:
    """The JSON lines of a service's log (uvicorn's or a crash's plain lines skipped)."""
    if path is None or not path.exists():
        return []
    lines = []
    for raw in path.read_bytes().splitlines():
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            lines.append(entry)
    return lines


def traced(stack: Stack, trace_id: str) -> dict[str, list[dict[str, Any]]]:
    """Each service's log lines carrying ``trace_id`` (the services without any left out)."""
    found = {}
    for name, service in stack.services.items():
        lines = [e for e in json_lines(service.log_path) if e.get("trace_id") == trace_id]
        if lines:
            found[name] = lines
    return found


def ts(entry: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(entry["ts"])


async def follow(
    stack: Stack, user: httpx.AsyncClient, headers: dict[str, str]
) -> tuple[str, str, httpx.Response, dict[str, list[dict[str, Any]]]]:
    """Submit a quick job, wait until it succeeded and its worker logged the end of it;
    (job id, trace id the gateway answered, the response, the traced lines by service)."""
    response = await user.post(
        "/api/jobs",
        json={"type": "simulate", "priority": 2, "payload": FAST_SUCCESS},
        headers=headers,
    )
    assert response.status_code == 202, response.text
    job_id: str = response.json()["jobId"]
    trace_id = response.headers["x-trace-id"]
    await wait_for_job(user, job_id, {"succeeded"})
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        found = traced(stack, trace_id)
        workers = [n for n in found if n.startswith("worker-")]
        finished = [e for n in workers for e in found[n] if e.get("action") == "job_finished"]
        terminal = [
            e
            for n in found
            if n.startswith("scheduler")
            for e in found[n]
            if e.get("to_status") == "succeeded"
        ]
        if (finished and terminal) or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.1)
    return job_id, trace_id, response, found


def assert_followed(job_id: str, response: httpx.Response, found: dict[str, list[Any]]) -> None:
    assert "gateway" in found, f"no gateway line carries the trace id: {sorted(found)}"
    assert "submission" in found, f"no submission line carries the trace id: {sorted(found)}"
    workers = [name for name in found if name.startswith("worker-")]
    assert len(workers) == 1, f"expected the lines of the one worker that ran it: {workers}"
    worker_lines = found[workers[0]]

    # The gateway's request line, bound by its middleware, with the request id it answered.
    (request_line,) = [e for e in found["gateway"] if e.get("action") == "http_request"]
    assert request_line["request_id"] == response.headers["x-request-id"]
    assert request_line["route"] == "/api/jobs"
    # The submission service's line, with the request id its middleware bound.
    (accepted,) = [e for e in found["submission"] if e.get("action") == "submission_accepted"]
    assert accepted["job_id"] == job_id
    assert accepted["request_id"] == response.headers["x-request-id"]
    # Every worker line of the attempt names it; it started and finished.
    assert {e.get("action") for e in worker_lines} >= {"job_started", "job_finished"}
    for entry in worker_lines:
        assert entry.get("job_id") == job_id, entry
        assert entry.get("attempt") == 1, entry
        assert entry.get("worker_id"), entry

    # The scheduler's line per transaction that moved the job: recorded and queued, then
    # (started and) succeeded, each with the job and its attempt.
    schedulers = [name for name in found if name.startswith("scheduler")]
    assert schedulers, f"no scheduler line carries the trace id: {sorted(found)}"
    moved = [e for name in schedulers for e in found[name] if e.get("action") == "job_moved"]
    assert all(e["job_id"] == job_id for e in moved), moved
    assert moved[0]["from_status"] is None and moved[0]["to_status"] == "queued", moved
    assert moved[-1]["to_status"] == "succeeded" and moved[-1]["attempt"] == 1, moved

    # First appearance: gateway (its request line is written when the request ends: it began
    # duration_ms earlier), then submission, then the worker.
    gateway_began = ts(request_line) - timedelta(milliseconds=request_line["duration_ms"])
    submission_first = min(ts(e) for e in found["submission"])
    worker_first = min(ts(e) for e in worker_lines)
    slack = timedelta(milliseconds=5)  # the gateway's duration is rounded
    # The scheduler recorded it after the submission service accepted it, and saw it succeed
    # after the worker started it.
    assert submission_first <= ts(moved[0]) + slack, (submission_first, moved[0])
    assert worker_first <= ts(moved[-1]) + slack, (worker_first, moved[-1])
    assert gateway_began <= submission_first + slack <= worker_first + slack, (
        gateway_began,
        submission_first,
        worker_first,
    )


async def test_a_chosen_trace_id_follows_the_job_through_every_service(
    stack: Stack, user: httpx.AsyncClient
) -> None:
    chosen = f"e2e-trace-{uuid.uuid4().hex}"
    job_id, answered, response, found = await follow(stack, user, {"X-Trace-Id": chosen})
    assert answered == chosen
    assert_followed(job_id, response, found)


async def test_the_gateway_makes_and_forwards_a_trace_id_when_the_client_sends_none(
    stack: Stack, user: httpx.AsyncClient
) -> None:
    job_id, trace_id, response, found = await follow(stack, user, {})
    assert len(trace_id) == 32
    # The submission service recorded the gateway's trace id on the job (not one of its own):
    # the worker ran the dispatch under it.
    assert_followed(job_id, response, found)
