"""A rolling deploy kills nothing (issue 31, point 4). Two workers consume the ``default``
queue; under a steady load of ``acc.reverse`` (a team's type on that queue,
``jobs_testing.team_handlers``) and ``simulate`` jobs they are restarted one by one with and
without the team's module: added on one, on both, removed from one (a rollback), from both
(the type has no live worker: its jobs wait), and added back. A worker never fails a job
whose type it lacks: the scheduler sends such jobs only where a live worker serves the type
(the type's lane while only some do), a worker that got one anyway hands it back, and jobs
of a type no live worker serves wait, ``queued``, until one is live. Every job succeeds on
its first attempt; none is dead."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from jobs_testing.gateway_session import login
from jobs_testing.plugin import PostgresServer, RabbitServer
from jobs_testing.stack import Stack
from jobs_testing.team_handlers import TEAM_MODULE

from .conftest import running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

ACME = {"WORKER_HANDLER_MODULES": TEAM_MODULE}
PLAIN = {"WORKER_HANDLER_MODULES": ""}
SHARED = {"WORKER_DRAIN_TIMEOUT": "20"}
QUICK = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.2}


@pytest.fixture(scope="module")
async def stack(
    postgres_server: PostgresServer,
    rabbit_server: RabbitServer,
    mongo_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    async with running_stack(
        postgres_server,
        rabbit_server,
        mongo_url,
        tmp_path_factory.mktemp("rolling-deploy"),
        worker_env=({**SHARED, **ACME}, {**SHARED, **PLAIN}),
        extra_env={
            "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
            # Types announced every second, so the registry knows acc.reverse at once.
            "WORKER_TYPES_INTERVAL": "1",
            "SUBMISSION_WORKER_TYPES_INTERVAL_SECONDS": "1",
        },
    ) as running:
        yield running


async def redeploy(stack: Stack, name: str, env: dict[str, str]) -> None:
    """Stop one worker (it drains), start it again with ``env``, wait until it is ready."""
    await asyncio.to_thread(stack.stop_service, name)
    stack.services[name].env.update(env)
    await asyncio.to_thread(stack.start_service, name)
    await asyncio.to_thread(stack.wait_ready, 60.0, [name])


class Load:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.accepted: dict[str, str] = {}  # job id -> type
        self.refused: list[str] = []

    async def submit(self, job_type: str, payload: dict[str, Any]) -> None:
        response = await self.client.post(
            "/api/jobs", json={"type": job_type, "priority": 2, "payload": payload}
        )
        if response.status_code == 202:
            self.accepted[response.json()["jobId"]] = job_type
        else:
            self.refused.append(f"{response.status_code} {response.text[:200]}")

    async def run(self, stop: asyncio.Event) -> None:
        index = 0
        while not stop.is_set():
            index += 1
            await self.submit("acc.reverse", {"text": f"deploy-{index}"})
            await self.submit("simulate", QUICK)
            await asyncio.sleep(0.1)


async def says_why_jobs_wait(client: httpx.AsyncClient, load: Load) -> None:
    """The type listing and the latest jobs of the type say why they wait. The scheduler
    counts a stopped worker live for up to a lease after its last heartbeat (jobs go to the
    type's lane meanwhile, queued without a reason), so the jobs' reason may come later."""
    reason = "no live worker serves 'acc.reverse'"
    types = {t["type"]: t for t in (await client.get("/api/job-types")).json()["types"]}
    assert types["acc.reverse"]["waitingReason"] == reason, types["acc.reverse"]
    deadline = time.monotonic() + 20
    while True:
        latest = [job for job, kind in load.accepted.items() if kind == "acc.reverse"][-5:]
        answers = [(await client.get(f"/api/jobs/{job}")).json() for job in latest]
        if any(a["waitingReason"] == reason and a["status"] == "queued" for a in answers):
            return
        assert time.monotonic() < deadline, [(a["status"], a["waitingReason"]) for a in answers]
        await asyncio.sleep(0.5)


async def test_workers_restarted_with_and_without_a_module_under_load_kill_nothing(
    stack: Stack,
) -> None:
    gateway = stack.services["gateway"].url
    token = await login(gateway, "admin@test.com", "admin123")
    async with httpx.AsyncClient(
        base_url=gateway, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        deadline = time.monotonic() + 60  # the registry learns acc.reverse from worker-1
        while True:
            types = {t["type"]: t for t in (await client.get("/api/job-types")).json()["types"]}
            if types.get("acc.reverse", {}).get("liveWorkers"):
                break
            assert time.monotonic() < deadline, "acc.reverse was never announced"
            await asyncio.sleep(0.2)
        load = Load(client)
        stop = asyncio.Event()
        submitting = asyncio.create_task(load.run(stop))
        await asyncio.sleep(3)
        await redeploy(stack, "worker-2", ACME)  # the deploy reaches the second worker
        await asyncio.sleep(2)
        await redeploy(stack, "worker-1", PLAIN)  # a rollback starts on the first
        await asyncio.sleep(2)
        await redeploy(stack, "worker-2", PLAIN)  # no live worker serves acc.reverse now
        await asyncio.sleep(4)
        waiting = [job for job, kind in load.accepted.items() if kind == "acc.reverse"][-1]
        seen = (await client.get(f"/api/jobs/{waiting}")).json()
        assert seen["status"] == "queued", seen  # it waits, it does not fail
        await says_why_jobs_wait(client, load)
        await redeploy(stack, "worker-1", ACME)  # and the module is back
        await asyncio.sleep(3)
        stop.set()
        await submitting
        assert load.refused == []
        deadline = time.monotonic() + 120
        while True:
            found = {}
            for job_id in load.accepted:
                job = (await client.get(f"/api/jobs/{job_id}")).json()
                found[job_id] = job
            left = {j: f["status"] for j, f in found.items() if f["status"] != "succeeded"}
            if not left or any(s in ("dead", "cancelled") for s in left.values()):
                break
            assert time.monotonic() < deadline, f"{len(left)} jobs not succeeded: {left}"
            await asyncio.sleep(1)
    dead = {
        j: (f["status"], f.get("lastError")) for j, f in found.items() if f["status"] != "succeeded"
    }
    assert dead == {}, dead
    acme = [f for j, f in found.items() if load.accepted[j] == "acc.reverse"]
    assert all(f["result"]["text"].endswith("-yolped") for f in acme)  # "deploy-<n>" reversed
    assert len(acme) >= 40
    assert all(f["attempt"] == 1 for f in found.values()), [
        (j, f["attempt"]) for j, f in found.items() if f["attempt"] != 1
    ]
    handed_back = [
        f for f in acme if any("handed back" in e["reason"] for e in f.get("timeline", []))
    ]
    waited = [f for f in acme if any(e["reason"].startswith("waiting:") for e in f["timeline"])]
    assert waited, "no acme job waited while no live worker served the type"
    print(
        f"rolling deploy: {len(found)} jobs, {len(acme)} acc.reverse, {len(waited)} waited, "
        f"{len(handed_back)} handed back, 0 dead"
    )
