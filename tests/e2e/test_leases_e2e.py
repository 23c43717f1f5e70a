"""Leases under a paused scheduler and a killed worker, with every service a real process
(issue 6: the scheduler never blames a worker for its own lag)."""

from __future__ import annotations

import asyncio
import os
import signal

import httpx
import pytest

from jobs_testing.stack import Stack

from .conftest import wait_for_job
from .test_pipeline_e2e import TERMINAL, submit
from .test_scheduling_e2e import until, worker_service

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

LEASE_SECONDS = 3  # the e2e stack's SCHEDULER_LEASE_SECONDS


def work(seconds: float) -> dict[str, float]:
    return {
        "immediateFailureRate": 0,
        "failureRate": 0,
        "minSeconds": seconds,
        "maxSeconds": seconds,
    }


async def test_a_scheduler_paused_for_three_leases_re_runs_no_job(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    ids = [
        await submit(admin, {"type": "simulate", "priority": 2, "payload": work(2 + i % 4)})
        for i in range(20)
    ]
    for job_id in ids[:4]:
        await until(admin, job_id, lambda j: j["status"] in ("running", *TERMINAL))
    process = stack.services["scheduler"].process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)  # the workers keep running and reporting
    try:
        await asyncio.sleep(3 * LEASE_SECONDS + 1)
    finally:
        os.kill(process.pid, signal.SIGCONT)
    jobs = [await wait_for_job(admin, job_id, TERMINAL, timeout=120) for job_id in ids]
    assert [j["status"] for j in jobs] == ["succeeded"] * len(ids)
    assert [len(j["attempts"]) for j in jobs] == [1] * len(ids)


async def test_a_killed_workers_job_moves_to_another_worker_in_time(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    job_id = await submit(admin, {"type": "simulate", "priority": 3, "payload": work(4)})
    running = await until(admin, job_id, lambda j: j["status"] == "running" and j["workerId"])
    victim_id = running["workerId"]
    victim = worker_service(stack, victim_id)
    process = stack.services[victim].process
    assert process is not None
    loop = asyncio.get_running_loop()
    os.kill(process.pid, signal.SIGKILL)
    killed_at = loop.time()
    process.wait(timeout=10)
    try:
        moved = await until(
            admin,
            job_id,
            lambda j: j["status"] in ("running", *TERMINAL) and j["workerId"] != victim_id,
            timeout=LEASE_SECONDS + 10,
        )
        assert loop.time() - killed_at < LEASE_SECONDS + 10
        assert moved["workerId"] != victim_id
        job = await wait_for_job(admin, job_id, TERMINAL, timeout=60)
        assert job["status"] == "succeeded"
        assert job["workerId"] != victim_id
    finally:
        stack.start_service(victim)
        await asyncio.to_thread(stack.wait_ready, 60.0, [victim])
