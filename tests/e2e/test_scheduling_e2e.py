"""Issue 3 through the gateway with every service running as a real process."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jobs_testing.stack import Stack

from .conftest import wait_for_job
from .test_pipeline_e2e import FAST_SUCCESS, TERMINAL, png, submit

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def worker_service(stack: Stack, worker_id: str) -> str:
    """The stack's name of the worker process whose id is ``worker_id``."""
    pid = int(worker_id.rsplit("-", 2)[1])
    for name, service in stack.services.items():
        if service.process is not None and service.process.pid == pid:
            return name
    raise AssertionError(f"no worker process with pid {pid}")


async def until(
    client: httpx.AsyncClient, job_id: str, predicate: Any, timeout: float = 60.0
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    job: dict[str, Any] = {}
    while asyncio.get_running_loop().time() < deadline:
        response = await client.get(f"/api/jobs/{job_id}")
        job = response.json()
        if response.status_code == 200 and predicate(job):
            return job
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} never matched; last seen {job}")


async def test_a_delayed_job_runs_no_earlier_than_asked(user: httpx.AsyncClient) -> None:
    asked = datetime.now(UTC)
    job_id = await submit(
        user, {"type": "simulate", "priority": 3, "delaySeconds": 2, "payload": FAST_SUCCESS}
    )
    job = await wait_for_job(user, job_id, TERMINAL)
    assert job["status"] == "succeeded"
    started = parse_time(job["attempts"][0]["startedAt"])
    assert started >= asked + timedelta(seconds=2)

    run_at = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    at_job = await submit(
        user, {"type": "simulate", "priority": 3, "runAt": run_at, "payload": FAST_SUCCESS}
    )
    done = await wait_for_job(user, at_job, TERMINAL)
    assert parse_time(done["attempts"][0]["startedAt"]) >= parse_time(run_at)


async def test_a_frozen_workers_job_is_retried_on_another_worker_after_its_lease_expires(
    admin: httpx.AsyncClient, stack: Stack
) -> None:
    slow = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 3, "maxSeconds": 3}
    job_id = await submit(admin, {"type": "simulate", "priority": 3, "payload": slow})
    running = await until(admin, job_id, lambda j: j["status"] == "running" and j["workerId"])
    frozen_id = running["workerId"]
    frozen = worker_service(stack, frozen_id)
    process = stack.services[frozen].process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)  # alive for the broker, silent for the scheduler
    try:
        retried = await until(admin, job_id, lambda j: j["attempt"] >= 2, timeout=60)
        assert retried["attempts"][0]["status"] == "lost"
    finally:
        # The frozen worker may hold the re-dispatched message too: kill it for good.
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    job = await wait_for_job(admin, job_id, TERMINAL, timeout=90)
    assert job["status"] == "succeeded"
    assert job["attempts"][-1]["workerId"] != frozen_id
    assert job["attempts"][-1]["status"] == "succeeded"
    stack.start_service(frozen)
    await asyncio.to_thread(stack.wait_ready, 60.0, [frozen])


async def test_cancel_a_running_job_and_a_waiting_one(user: httpx.AsyncClient) -> None:
    long = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 30, "maxSeconds": 30}
    job_id = await submit(user, {"type": "simulate", "priority": 3, "payload": long})
    await until(user, job_id, lambda j: j["status"] == "running")
    cancelled = await user.post(f"/api/jobs/{job_id}/cancel", json={"reason": "not needed"})
    assert cancelled.status_code in (200, 202), cancelled.text
    job = await wait_for_job(user, job_id, TERMINAL, timeout=20)
    assert job["status"] == "cancelled"
    assert job["attempts"][0]["status"] == "cancelled"

    waiting = await submit(
        user, {"type": "simulate", "priority": 3, "delaySeconds": 5, "payload": FAST_SUCCESS}
    )
    # Right after the 202: the cancel waits for the job to be recorded, then cancels it.
    at_once = await user.post(f"/api/jobs/{waiting}/cancel")
    assert at_once.status_code == 200, at_once.text
    assert at_once.json()["status"] == "cancelled"
    assert (await user.post(f"/api/jobs/{waiting}/cancel")).status_code == 409
    # Past its time, a cancelled job still never runs.
    await asyncio.sleep(6)
    after = (await user.get(f"/api/jobs/{waiting}")).json()
    assert after["status"] == "cancelled"
    assert all(a["startedAt"] is None for a in after["attempts"])


async def test_a_dead_job_is_requeued_from_the_dead_letter_api_and_succeeds(
    user: httpx.AsyncClient,
) -> None:
    broken = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"broken" * 10).decode()
    job_id = await submit(
        user,
        {
            "type": "image_resize",
            "priority": 2,
            "payload": {"imageBase64": broken, "width": 8, "height": 8},
        },
    )
    await wait_for_job(user, job_id, {"dead"})
    letters = (await user.get("/api/dead-letters", params={"pageSize": 100})).json()["items"]
    letter = next(item for item in letters if item["jobId"] == job_id)
    assert letter["reason"] == "permanent_error"
    groups = (await user.get("/api/dead-letters/groups")).json()
    assert any(g["fingerprint"] == letter["fingerprint"] for g in groups["items"])

    bad_edit = await user.post(
        f"/api/dead-letters/{letter['id']}/requeue", json={"payload": {"width": 0}}
    )
    assert bad_edit.status_code == 422
    fixed = {"imageBase64": png(), "width": 8, "height": 8, "format": "png"}
    requeued = await user.post(
        f"/api/dead-letters/{letter['id']}/requeue",
        json={"payload": fixed, "reason": "uploaded a readable image"},
    )
    assert requeued.status_code == 202, requeued.text
    job = await wait_for_job(user, job_id, {"succeeded"})
    assert job["result"]["width"] == 8
    actions = (await user.get("/api/dead-letters/actions")).json()["items"]
    assert any(a["action"] == "requeue" and a["jobId"] == job_id for a in actions)


async def test_workers_are_listed_with_their_heartbeats(admin: httpx.AsyncClient) -> None:
    async def alive() -> list[dict[str, Any]]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = (await admin.get("/api/workers")).json()["items"]
            live = [w for w in listed if w["status"] == "alive"]
            if len(live) >= 2:
                return live
            await asyncio.sleep(0.2)
        raise AssertionError("two live workers never listed")

    for worker in await alive():
        assert worker["hostname"] and worker["pid"] > 0 and worker["queues"]
        assert worker["concurrency"] == 35


async def test_a_batch_finishes_when_every_member_is_terminal(user: httpx.AsyncClient) -> None:
    specs = [
        {"type": "simulate", "priority": 1 + i % 3, "payload": FAST_SUCCESS} for i in range(50)
    ]
    response = await user.post("/api/batches", json={"name": "e2e batch", "jobs": specs})
    assert response.status_code == 202, response.text
    batch_id = response.json()["batchId"]
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        batch = (await user.get(f"/api/batches/{batch_id}")).json()
        if batch.get("finished"):
            break
        assert asyncio.get_running_loop().time() < deadline, batch
        await asyncio.sleep(0.2)
    assert batch["total"] == 50
    assert batch["succeeded"] == 50


async def test_dependencies_run_in_order_and_cycles_are_refused(user: httpx.AsyncClient) -> None:
    quick = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0.5, "maxSeconds": 0.5}
    parent = await submit(user, {"type": "simulate", "priority": 1, "payload": quick})
    child = await submit(
        user, {"type": "simulate", "priority": 3, "dependsOn": [parent], "payload": quick}
    )
    done_child = await wait_for_job(user, child, TERMINAL)
    done_parent = await wait_for_job(user, parent, TERMINAL)
    assert done_child["status"] == "succeeded"
    assert parse_time(done_child["attempts"][0]["startedAt"]) >= parse_time(
        done_parent["finishedAt"]
    )

    cycle = await user.post(
        "/api/batches",
        json={
            "jobs": [
                {
                    "ref": "a",
                    "type": "simulate",
                    "priority": 1,
                    "payload": {},
                    "dependsOn": ["ref:b"],
                },
                {
                    "ref": "b",
                    "type": "simulate",
                    "priority": 1,
                    "payload": {},
                    "dependsOn": ["ref:a"],
                },
            ]
        },
    )
    assert cycle.status_code == 422
    unknown = await user.post(
        "/api/jobs",
        json={"type": "simulate", "priority": 1, "payload": {}, "dependsOn": [str(uuid.uuid4())]},
    )
    assert unknown.status_code == 422


async def test_job_logs_and_timeline_are_served(user: httpx.AsyncClient) -> None:
    job_id = await submit(user, {"type": "simulate", "priority": 3, "payload": FAST_SUCCESS})
    job = await wait_for_job(user, job_id, TERMINAL)
    moves = [(t["fromStatus"], t["toStatus"]) for t in job["timeline"]]
    assert moves[0] == (None, "pending")
    assert moves[-1] == ("running", "succeeded")
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        logs = (await user.get(f"/api/jobs/{job_id}/logs")).json()["items"]
        if logs:
            break
        assert asyncio.get_running_loop().time() < deadline, "no log lines"
        await asyncio.sleep(0.2)
    assert all(line["attempt"] == 1 for line in logs)


async def test_schedules_validate_cron_and_timezone(user: httpx.AsyncClient) -> None:
    template = {"type": "simulate", "priority": 1, "payload": {}}
    bad_cron = await user.post(
        "/api/schedules",
        json={"name": "bad", "cron": "61 * * * *", "timezone": "UTC", "jobTemplate": template},
    )
    assert bad_cron.status_code == 422
    bad_zone = await user.post(
        "/api/schedules",
        json={
            "name": "bad2",
            "cron": "* * * * *",
            "timezone": "Mars/Base",
            "jobTemplate": template,
        },
    )
    assert bad_zone.status_code == 422
    created = await user.post(
        "/api/schedules",
        json={
            "name": f"nightly-{uuid.uuid4().hex[:6]}",
            "cron": "0 3 * * *",
            "timezone": "Europe/Berlin",
            "jobTemplate": template,
        },
    )
    assert created.status_code == 201, created.text
    schedule = created.json()
    assert parse_time(schedule["nextFireAt"]) > datetime.now(UTC)
    paused = await user.post(f"/api/schedules/{schedule['id']}/pause")
    assert paused.status_code == 200
    assert (await user.delete(f"/api/schedules/{schedule['id']}")).status_code == 204
