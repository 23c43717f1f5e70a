"""RabbitMQ restarted under load: every service recovers by itself and every job finishes
(issue 19, point 1). The broker is a node of this test's own (the machine's shared one
serves other suites); the rest of the platform runs as in `make dev`."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from jobs_common.liveness import EXIT_UNHEALTHY
from jobs_testing.gateway_session import login
from jobs_testing.infra import free_port
from jobs_testing.plugin import PostgresServer
from jobs_testing.private_infra import PrivateRabbit
from jobs_testing.stack import Stack
from jobs_testing.supervisor import Supervisor, supervise_stack

from .conftest import isolated_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

QUICK = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.3}
OUTAGE_SECONDS = 10


@pytest.fixture(scope="module")
async def broker() -> AsyncIterator[PrivateRabbit]:
    rabbit = PrivateRabbit()
    await asyncio.to_thread(rabbit.start)
    try:
        yield rabbit
    finally:
        await asyncio.to_thread(rabbit.stop)


@pytest.fixture(scope="module")
async def platform(
    broker: PrivateRabbit,
    postgres_server: PostgresServer,
    mongo_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Supervised]:
    database = f"e2e_broker_{uuid.uuid4().hex[:10]}"
    database_url = await postgres_server.create(database)
    base = tmp_path_factory.mktemp("broker-restart")
    config = isolated_config(
        database_url=database_url,
        amqp_url=broker.amqp_url,
        mongo_url=mongo_url,
        base=base,
        smtp_port=free_port(),  # no email jobs here
        extra_env={
            "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
            # A dispatch whose confirm the restart cut off is dropped, not sent twice, and the
            # reconciler sends it again once the broker cannot hold it any more: past the
            # ready TTL (60 s) with a little slack instead of the default 120 s.
            "SCHEDULER_RECONCILE_AFTER_SECONDS": "70",
        },
    )
    stack = Stack(config, Path(base) / "logs")
    # Supervised as `make dev` runs it: a service that gives up on itself (liveness, exit 70)
    # is started again; no one else restarts anything.
    supervisor = supervise_stack(stack)
    supervisor.start()
    try:
        await asyncio.to_thread(stack.wait_ready, 90.0)
        yield Supervised(stack, supervisor)
    finally:
        await asyncio.to_thread(supervisor.stop)
        await postgres_server.drop(database)


@dataclass
class Supervised:
    stack: Stack
    supervisor: Supervisor


class Load:
    """Submits quick jobs through the gateway at a steady pace, each with an idempotency
    key, trying a submission again (same key) until it is answered: every 2xx is one job."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.accepted: list[str] = []
        self.refused: list[str] = []

    async def submit_one(self) -> None:
        key = uuid.uuid4().hex
        body = {"type": "simulate", "priority": 1 + len(self.accepted) % 3, "payload": QUICK}
        for _ in range(60):
            try:
                response = await self.client.post(
                    "/api/jobs", json=body, headers={"Idempotency-Key": key}
                )
            except httpx.HTTPError:
                await asyncio.sleep(0.5)
                continue
            if response.status_code == 202:
                self.accepted.append(response.json()["jobId"])
                return
            if response.status_code < 500:
                self.refused.append(f"{response.status_code} {response.text[:200]}")
                return
            await asyncio.sleep(0.5)
        self.refused.append(f"never answered: {key}")

    async def run(self, seconds: float, per_second: float) -> None:
        deadline = time.monotonic() + seconds
        pending: set[asyncio.Task[None]] = set()
        while time.monotonic() < deadline:
            pending.add(asyncio.create_task(self.submit_one()))
            await asyncio.sleep(1 / per_second)
        await asyncio.gather(*pending)


async def statuses(client: httpx.AsyncClient, job_ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for job_id in job_ids:
        response = await client.get(f"/api/jobs/{job_id}")
        found[job_id] = response.json()["status"] if response.status_code == 200 else "?"
    return found


async def test_a_broker_restart_under_load_ends_with_every_job_succeeded(
    platform: Supervised, broker: PrivateRabbit
) -> None:
    stack, supervisor = platform.stack, platform.supervisor
    gateway = stack.services["gateway"].url
    token = await login(gateway, "user@test.com", "user123")
    async with httpx.AsyncClient(
        base_url=gateway, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        load = Load(client)
        submitting = asyncio.create_task(load.run(seconds=30, per_second=15))
        await asyncio.sleep(6)
        await asyncio.to_thread(broker.stop_app)
        await asyncio.sleep(OUTAGE_SECONDS)
        await asyncio.to_thread(broker.start_app)
        await submitting
        assert load.refused == []
        deadline = time.monotonic() + 240
        left: dict[str, str] = {}
        while time.monotonic() < deadline:
            found = await statuses(client, load.accepted)
            left = {job: status for job, status in found.items() if status != "succeeded"}
            if not left or any(s in ("dead", "cancelled") for s in left.values()):
                break
            await asyncio.sleep(2)
    sample = dict(list(left.items())[:10])
    listed = await asyncio.to_thread(broker.queues)
    queues = {q["name"]: (q["messages"], q["consumers"]) for q in listed}
    assert left == {}, (
        f"{len(left)} of {len(load.accepted)} jobs not succeeded, e.g. {sample}; "
        f"queues (messages, consumers): {queues}"
    )
    # No one restarted anything; a process either rode the restart out or gave up on itself
    # within its liveness bound (exit 70) and was started again by the supervisor.
    exits = {name: supervisor.exits(name) for name in stack.services}
    assert all(set(codes) <= {EXIT_UNHEALTHY} for codes in exits.values()), exits
    await asyncio.to_thread(stack.wait_ready, 60.0, None, restarting=True)
    # Nothing left behind in the ready queues: a late copy of a ready message (redelivered
    # after the restart) is taken by a worker and dropped as stale, so they drain. Polled:
    # the management API's counts lag up to its statistics interval (5 s).
    deadline = time.monotonic() + 30
    while True:
        ready = await asyncio.to_thread(broker.queues)
        waiting = {
            q["name"]: (q["messages"], q["consumers"])
            for q in ready
            if str(q["name"]).startswith("jobs.ready")
        }
        if all(messages == 0 for messages, _ in waiting.values()):
            break
        assert time.monotonic() < deadline, f"ready queues (messages, consumers): {waiting}"
        await asyncio.sleep(1)


def worker_log_lines(stack: Stack, job_id: str, action: str) -> list[str]:
    """Lines of every worker's log that name ``job_id`` with ``action``."""
    marks = (f"action={action}", f'"action":"{action}"')
    found = []
    for name, service in stack.services.items():
        path = service.log_path
        if name.startswith("worker") and path is not None and path.exists():
            found += [
                line
                for line in path.read_text(errors="replace").splitlines()
                if job_id in line and any(mark in line for mark in marks)
            ]
    return found


async def test_a_worker_cut_off_while_its_handler_runs_runs_it_once(
    platform: Supervised, broker: PrivateRabbit
) -> None:
    """Issue 31's order: the broker closes the connection of the worker running a job (its
    handler goes on), and redelivers the ready message to the other worker, connected. That
    one claims the copy and waits; the first reconnects, publishes its kept result, the copy
    is skipped: one run, attempt 1, on the first worker."""
    stack = platform.stack
    gateway = stack.services["gateway"].url
    token = await login(gateway, "admin@test.com", "admin123")  # sees worker ids
    slow = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 4, "maxSeconds": 4}
    async with httpx.AsyncClient(
        base_url=gateway, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        response = await client.post(
            "/api/jobs", json={"type": "simulate", "priority": 2, "payload": slow}
        )
        assert response.status_code == 202, response.text
        job_id = response.json()["jobId"]
        deadline = time.monotonic() + 30
        while True:
            job = (await client.get(f"/api/jobs/{job_id}")).json()  # 404 until recorded
            if job.get("status") == "running" and job.get("workerId"):
                break
            assert time.monotonic() < deadline, job
            await asyncio.sleep(0.1)
        holder = job["workerId"]
        names = await asyncio.to_thread(broker.connections_named, holder)
        assert names, f"no connection named after {holder}"
        assert await asyncio.to_thread(broker.close_connections, names) == len(names)
        deadline = time.monotonic() + 60
        while job["status"] not in ("succeeded", "dead", "cancelled"):
            assert time.monotonic() < deadline, job
            await asyncio.sleep(0.3)
            job = (await client.get(f"/api/jobs/{job_id}")).json()
    assert (job["status"], job["attempt"], job["workerId"]) == ("succeeded", 1, holder), job
    assert [a["attempt"] for a in job["attempts"]] == [1]
    started = worker_log_lines(stack, job_id, "job_started")
    assert len(started) == 1, started
    # The copy's claim waited while the attempt ran on its holder; its next ask is skipped.
    deadline = time.monotonic() + 20
    while not worker_log_lines(stack, job_id, "claim_skip"):
        assert time.monotonic() < deadline, "the redelivered copy was not claimed and skipped"
        await asyncio.sleep(0.5)
    assert len(worker_log_lines(stack, job_id, "job_started")) == 1
