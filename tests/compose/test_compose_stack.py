"""docker-compose.yml for real (`make test-compose`): built and run under podman, through its own
health checks and start order; a smoke run through the published gateway port; scaled workers
and schedulers; a killed worker; `down -v`. The tests run in file order on one stack."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import signal
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from PIL import Image
from websockets.asyncio.client import connect

from jobs_testing.gateway_session import login, signed_in

from .stack import ComposeStack, StartLog

pytestmark = [pytest.mark.compose, pytest.mark.timeout(900)]

TERMINAL = {"succeeded", "dead", "cancelled"}
FAST = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.05}
ONE_SECOND = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 1, "maxSeconds": 1}
SCRAPED = {"gateway", "submission", "dashboard", "scheduler", "worker", "rabbitmq", "prometheus"}


def png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 90)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


async def submit(client: httpx.AsyncClient, body: dict[str, Any]) -> str:
    response = await client.post("/api/jobs", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["jobId"]
    return job_id


async def submit_batch(client: httpx.AsyncClient, jobs: list[dict[str, Any]]) -> list[str]:
    response = await client.post("/api/batches", json={"jobs": jobs})
    assert response.status_code == 202, response.text
    ids: list[str] = response.json()["jobIds"]
    return ids


async def finished(
    client: httpx.AsyncClient, job_ids: list[str], timeout: float = 180
) -> list[dict[str, Any]]:
    """Every job's detail once all are terminal."""
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, Any]] = {}
    while len(done) < len(job_ids):
        for job_id in [j for j in job_ids if j not in done]:
            response = await client.get(f"/api/jobs/{job_id}")
            if response.status_code == 200 and response.json()["status"] in TERMINAL:
                done[job_id] = response.json()
        if len(done) < len(job_ids):
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(job_ids) - len(done)} jobs not finished")
            await asyncio.sleep(0.5)
    return [done[job_id] for job_id in job_ids]


def worker_of(job: dict[str, Any]) -> str:
    """The worker that ran the job's succeeding attempt."""
    (winner,) = [a for a in job["attempts"] if a["status"] == "succeeded"]
    worker_id: str = winner["workerId"]
    return worker_id


def test_the_stack_comes_up_through_its_health_checks_in_dependency_order(
    compose_stack: ComposeStack, start_log: StartLog
) -> None:
    assert start_log.early_starts() == []
    # Every declared dependency was waited on with the condition the file names.
    assert ("gateway", "submission", "service_healthy") in start_log.edges
    assert ("worker", "migrate-scheduler", "service_completed_successfully") in start_log.edges
    containers = compose_stack.containers()
    assert {c.service for c in containers} == set(compose_stack.services)
    for container in containers:
        if container.service.startswith("migrate-"):
            assert container.state["ExitCode"] == 0, container.name
        else:
            assert container.running, container.name
            # Nothing crashed on the way up for want of something it needed.
            assert container.restarts == 0, container.name


async def test_every_job_type_a_batch_and_a_delayed_job_succeed_through_the_gateway(
    compose_stack: ComposeStack, admin: httpx.AsyncClient
) -> None:
    recipient = f"compose-{uuid.uuid4().hex[:8]}@example.com"
    singles = [
        {"type": "simulate", "priority": 2, "payload": FAST},
        {
            "type": "email",
            "priority": 3,
            "payload": {"to": recipient, "subject": "hi", "body": "x"},
        },
        {
            "type": "image_resize",
            "priority": 1,
            "payload": {"imageBase64": png(), "width": 16, "height": 12, "format": "webp"},
        },
        {
            "type": "report_generation",
            "priority": 2,
            "payload": {"reportType": "jobs_summary", "format": "csv"},
        },
    ]
    ids = [await submit(admin, body) for body in singles]
    batch = await submit_batch(
        admin,
        [
            {"ref": "first", "type": "simulate", "priority": 2, "payload": FAST},
            {"type": "simulate", "priority": 2, "payload": FAST, "dependsOn": ["ref:first"]},
        ],
    )
    asked = datetime.now(UTC)
    delayed = await submit(
        admin, {"type": "simulate", "priority": 3, "delaySeconds": 3, "payload": FAST}
    )
    jobs = await finished(admin, [*ids, *batch, delayed])
    assert [job["status"] for job in jobs] == ["succeeded"] * len(jobs), jobs
    started = datetime.fromisoformat(jobs[-1]["attempts"][0]["startedAt"].replace("Z", "+00:00"))
    assert (started - asked).total_seconds() >= 3
    # The email reached the SMTP server standing in for Mailpit.
    (sink,) = compose_stack.containers("mailpit")
    assert f"to={recipient}" in compose_stack.logs(sink.name)


async def test_a_live_websocket_event_reaches_the_browser(
    gateway_url: str, admin: httpx.AsyncClient
) -> None:
    token = await login(gateway_url, "admin@test.com", "admin123")
    url = gateway_url.replace("http://", "ws://") + f"/ws/events?token={token}"
    async with connect(url) as socket:
        hello = json.loads(await asyncio.wait_for(socket.recv(), 10))
        assert hello["type"] == "hello"
        job_id = await submit(admin, {"type": "simulate", "priority": 2, "payload": FAST})
        seen: list[str] = []
        async with asyncio.timeout(60):
            while "succeeded" not in seen:
                frame = json.loads(await socket.recv())
                if frame["type"] == "job.changes":
                    seen += [c["toStatus"] for c in frame["changes"] if c["jobId"] == job_id]
    assert seen[-1] == "succeeded"


async def test_the_ui_the_rabbitmq_console_and_prometheus_answer(
    compose_stack: ComposeStack, gateway_url: str
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        index = await client.get(gateway_url + "/")
        assert index.status_code == 200
        assert "text/html" in index.headers["content-type"]
        assert '<div id="root">' in index.text

        console = f"http://127.0.0.1:{compose_stack.ports['RABBITMQ_CONSOLE_PORT']}"
        overview = await client.get(console + "/api/overview", auth=("guest", "guest"))
        assert overview.status_code == 200, overview.text
        queues = await client.get(console + "/api/queues", auth=("guest", "guest"))
        assert {"jobs.ready.low", "jobs.ready.medium", "jobs.ready.high"} <= {
            queue["name"] for queue in queues.json()
        }

        # Prometheus scrapes every service (15 s interval): all targets up.
        prometheus = f"http://127.0.0.1:{compose_stack.ports['PROMETHEUS_PORT']}"
        deadline = time.monotonic() + 90
        while True:
            targets = (await client.get(prometheus + "/api/v1/targets")).json()["data"]
            health = {(t["labels"]["job"], t["health"]) for t in targets["activeTargets"]}
            if {job for job, _ in health} >= SCRAPED and {h for _, h in health} == {"up"}:
                break
            assert time.monotonic() < deadline, health
            await asyncio.sleep(3)


@pytest.fixture(scope="module")
async def cron_schedule(gateway_url: str) -> str:
    async with signed_in(gateway_url, "admin@test.com", "admin123") as client:
        created = await client.post(
            "/api/schedules",
            json={
                "name": f"every-minute-{uuid.uuid4().hex[:6]}",
                "cron": "* * * * *",
                "timezone": "UTC",
                "jobTemplate": {"type": "simulate", "priority": 2, "payload": FAST},
            },
        )
    assert created.status_code == 201, created.text
    schedule_id: str = created.json()["id"]
    return schedule_id


async def cron_minutes(client: httpx.AsyncClient, schedule_id: str) -> Counter[str]:
    """How many jobs the schedule made for each minute it fired."""
    page = await client.get(
        "/api/jobs", params={"scheduleId": schedule_id, "pageSize": 100, "sortBy": "createdAt"}
    )
    assert page.status_code == 200, page.text
    return Counter((job["runAt"] or job["createdAt"])[:16] for job in page.json()["items"])


async def test_a_cron_schedule_fires(admin: httpx.AsyncClient, cron_schedule: str) -> None:
    deadline = time.monotonic() + 75
    while not (minutes := await cron_minutes(admin, cron_schedule)):
        assert time.monotonic() < deadline, "the schedule never fired"
        await asyncio.sleep(2)
    assert set(minutes.values()) == {1}


async def test_scaled_workers_share_the_work_and_two_schedulers_fire_the_cron_once(
    compose_stack: ComposeStack, admin: httpx.AsyncClient, cron_schedule: str
) -> None:
    compose_stack.resolve(scale={"worker": 3, "scheduler": 2})
    compose_stack.up(["worker", "scheduler"])
    assert len(compose_stack.containers("worker")) == 3
    assert len(compose_stack.containers("scheduler")) == 2
    scaled_at = time.time()

    ids = await submit_batch(
        admin, [{"type": "simulate", "priority": 2, "payload": FAST} for _ in range(300)]
    )
    jobs = await finished(admin, ids, timeout=300)
    assert Counter(job["status"] for job in jobs) == {"succeeded": 300}
    assert all(job["attempt"] == 1 for job in jobs)
    ran = Counter(worker_of(job) for job in jobs)
    assert len(ran) == 3, ran  # each of the three workers ran some

    # Two minute boundaries with both schedulers running: one job per minute, no gap.
    await asyncio.sleep(max(0.0, scaled_at + 125 - time.time()))
    minutes = await cron_minutes(admin, cron_schedule)
    assert set(minutes.values()) == {1}, minutes
    fired = sorted(minutes)
    expected_span = (
        datetime.fromisoformat(fired[-1]) - datetime.fromisoformat(fired[0])
    ).total_seconds() / 60 + 1
    assert len(fired) == expected_span, fired
    assert sum(1 for minute in fired if minute >= _minute(scaled_at)) >= 2


def _minute(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M")


async def test_a_killed_workers_jobs_finish_elsewhere_and_it_restarts(
    compose_stack: ComposeStack, admin: httpx.AsyncClient
) -> None:
    ids = await submit_batch(
        admin, [{"type": "simulate", "priority": 2, "payload": ONE_SECOND} for _ in range(30)]
    )
    victim = compose_stack.containers("worker")[0]
    hostname = victim.hostname
    deadline = time.monotonic() + 60
    held: list[str] = []
    while not held:
        assert time.monotonic() < deadline, "the victim never ran a job"
        for job_id in ids:
            job = (await admin.get(f"/api/jobs/{job_id}")).json()
            if job["status"] == "running" and (job["workerId"] or "").startswith(hostname):
                held.append(job_id)
        await asyncio.sleep(0.2)
    os.kill(victim.pid, signal.SIGKILL)

    jobs = await finished(admin, ids, timeout=240)
    assert Counter(job["status"] for job in jobs) == {"succeeded": 30}
    for job in jobs:
        if job["jobId"] in held:
            assert not worker_of(job).startswith(hostname), job

    # The restart policy (unless-stopped) brings it back, healthy.
    deadline = time.monotonic() + 120
    while True:
        (again,) = [c for c in compose_stack.containers("worker") if c.name == victim.name]
        if again.running and again.restarts >= 1:
            break
        assert time.monotonic() < deadline, again.state
        await asyncio.sleep(1)
    compose_stack.wait_healthy("worker")


def test_image_facts(compose_stack: ComposeStack) -> None:
    """Printed for docs/operations.md: image sizes and memory per container at idle (taken
    when the stack had come up, before the first job)."""
    sizes = compose_stack.image_sizes()
    for image, size in sizes.items():
        print(f"compose: image {image} {size / 1e6:.0f} MB")
    for container, used in sorted(compose_stack.idle_memory.items()):
        print(f"compose: memory at idle (after start, before any job) {container} {used}")
    assert sizes and compose_stack.idle_memory


def test_down_v_leaves_nothing_running(compose_stack: ComposeStack) -> None:
    compose_stack.save_logs(compose_stack.workdir / "logs")
    compose_stack.down()
    assert compose_stack.leftovers() == {}
