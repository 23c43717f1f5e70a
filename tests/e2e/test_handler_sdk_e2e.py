"""A team's own handler package (examples/acme_jobs, installed beside the platform, not part of
the worker) run end to end through the real stack: the registry learns its types from the
worker, the API validates their payloads, jobs are routed to the worker that serves their
queue and to no other, RetryLater, FailPermanently, progress, a blocking sync handler, a
cancelled custom job, and a type with no live worker that waits until one starts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from jobs_testing.extra_worker import ExtraWorker
from jobs_testing.stack import Stack

from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ACME_ENV = {
    "WORKER_HANDLER_MODULES": "acme_jobs.handlers",
    "WORKER_HANDLER_ENTRY_POINTS": "false",  # the acme types only: the built-ins elsewhere
}
INVOICE = {"customer": "c-100", "lines": [{"sku": "a", "quantity": 2, "unitCents": 150}]}


def acme_worker_on(stack: Stack, log: Path) -> ExtraWorker:
    """A third worker on the shared stack, serving only the acme queue."""
    return ExtraWorker(stack, log, ACME_ENV, worker_id="acme-worker")


@pytest.fixture(scope="module")
async def acme_worker(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ExtraWorker]:
    worker = acme_worker_on(stack, tmp_path_factory.mktemp("acme") / "acme-worker.log")
    worker.start()
    await worker.wait_ready()
    yield worker
    worker.stop()


async def job_types(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    answer = await client.get("/api/job-types")
    assert answer.status_code == 200, answer.text
    return {row["type"]: row for row in answer.json()["types"]}


async def submit(client: httpx.AsyncClient, job_type: str, payload: dict[str, Any]) -> str:
    answer = await client.post(
        "/api/jobs", json={"type": job_type, "priority": 2, "payload": payload}
    )
    assert answer.status_code == 202, answer.text
    job_id: str = answer.json()["jobId"]
    return job_id


async def announced(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    for _ in range(100):
        types = await job_types(client)
        if types.get("acme.invoice", {}).get("liveWorkers"):
            return types
        await asyncio.sleep(0.1)
    raise AssertionError("the acme types were never announced")


async def test_the_registry_lists_the_package_types_and_checks_their_payloads(
    acme_worker: ExtraWorker, user: httpx.AsyncClient
) -> None:
    types = await announced(user)
    invoice = types["acme.invoice"]
    assert (invoice["builtin"], invoice["queue"], invoice["liveWorkers"]) == (False, "acme", 1)
    assert invoice["timeoutSeconds"] == 60
    assert "lines" in invoice["payloadSchema"]["properties"]
    assert types["simulate"]["builtin"] and types["simulate"]["liveWorkers"] == 2

    refused = await user.post(
        "/api/jobs",
        json={
            "type": "acme.invoice",
            "priority": 2,
            "payload": {"customer": "nobody", "lines": [{"sku": "a", "quantity": 0}]},
        },
    )
    assert refused.status_code == 422
    fields = {detail["field"] for detail in refused.json()["details"]}
    assert {"payload.customer", "payload.lines.0.quantity", "payload.lines.0.unitCents"} <= fields
    unknown = await user.post("/api/jobs", json={"type": "acme.nope", "priority": 1, "payload": {}})
    assert unknown.status_code == 422 and "acme.invoice" in unknown.text


async def test_outcomes_progress_and_logs_of_a_custom_type(
    acme_worker: ExtraWorker, user: httpx.AsyncClient, admin: httpx.AsyncClient
) -> None:
    await announced(user)
    busy = await submit(user, "acme.invoice", {**INVOICE, "busyAttempts": 1})
    unknown = await submit(user, "acme.invoice", {**INVOICE, "customer": "c-999"})
    done = await wait_for_job(user, busy, {"succeeded", "dead"})
    assert done["status"] == "succeeded" and done["attempt"] == 2  # RetryLater, then success
    assert done["result"] == {"customer": "c-100", "totalCents": 300, "lines": 1}
    first = done["attempts"][0]
    assert (first["status"], first["errorClass"]) == ("failed", "RetryLater")
    logs = (await user.get(f"/api/jobs/{busy}/logs")).json()["items"]
    messages = [line["message"] for line in logs]
    assert "progress 100%: line 1: a" in messages and "invoiced c-100: 300 cents" in messages
    dead = await wait_for_job(user, unknown, {"dead", "succeeded"})
    assert (dead["status"], dead["attempt"]) == ("dead", 1)  # FailPermanently: no retries
    assert dead["lastError"] == "unknown customer c-999"
    for job_id in (busy, unknown):
        detail = (await admin.get(f"/api/jobs/{job_id}")).json()
        assert {a["workerId"] for a in detail["attempts"]} == {"acme-worker"}, detail["attempts"]


async def fire_now(stack: Stack, schedule_id: str) -> None:
    """Bring the schedule's next fire forward to now (the scheduler fires it on its tick)."""
    connection = await asyncpg.connect(
        stack.config.database_url.replace("postgresql+asyncpg://", "postgresql://")
    )
    try:
        await connection.execute(
            "UPDATE schedules SET next_fire_at = now() WHERE id = $1::uuid", schedule_id
        )
    finally:
        await connection.close()


async def test_a_custom_type_is_scheduled_checked_by_the_registry_and_fires_on_its_queue(
    acme_worker: ExtraWorker, user: httpx.AsyncClient, admin: httpx.AsyncClient, stack: Stack
) -> None:
    await announced(user)

    def schedule(template: dict[str, Any]) -> dict[str, Any]:
        return {"name": "nightly invoice", "cron": "0 3 * * *", "timezone": "UTC",
                "jobTemplate": {"priority": 2, **template}}  # fmt: skip

    bad = await user.post(
        "/api/schedules",
        json=schedule({"type": "acme.invoice", "payload": {"customer": "x", "lines": []}}),
    )
    assert bad.status_code == 422, bad.text
    assert "jobTemplate.payload.customer" in {d["field"] for d in bad.json()["details"]}
    unknown = await user.post("/api/schedules", json=schedule({"type": "acme.nope", "payload": {}}))
    assert unknown.status_code == 422, unknown.text
    assert [d["field"] for d in unknown.json()["details"]] == ["jobTemplate.type"]
    assert "acme.invoice" in unknown.text

    created = await user.post(
        "/api/schedules", json=schedule({"type": "acme.invoice", "payload": INVOICE})
    )
    assert created.status_code == 201, created.text
    view = created.json()
    template = view["jobTemplate"]
    assert (template["queue"], template["timeoutSeconds"]) == ("acme", 60)  # the type's
    await fire_now(stack, view["id"])
    for _ in range(200):
        fires = (await user.get(f"/api/schedules/{view['id']}")).json()["fires"]
        if fires:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the schedule never fired")
    fired = fires[0]["jobId"]
    job = await wait_for_job(user, fired, {"succeeded", "dead"})
    assert job["status"] == "succeeded" and job["result"]["totalCents"] == 300
    detail = (await admin.get(f"/api/jobs/{fired}")).json()
    assert [a["workerId"] for a in detail["attempts"]] == ["acme-worker"]
    assert (await user.delete(f"/api/schedules/{view['id']}")).status_code == 204


async def test_a_dead_custom_job_is_requeued_with_a_payload_the_registry_checks(
    acme_worker: ExtraWorker, user: httpx.AsyncClient
) -> None:
    await announced(user)
    job_id = await submit(user, "acme.invoice", {**INVOICE, "customer": "c-404"})
    await wait_for_job(user, job_id, {"dead"})
    letters = (await user.get("/api/dead-letters", params={"pageSize": 100})).json()["items"]
    (letter,) = [item for item in letters if item["jobId"] == job_id]
    bad_edit = await user.post(
        f"/api/dead-letters/{letter['id']}/requeue",
        json={"payload": {**INVOICE, "lines": [{"sku": "a", "quantity": 0, "unitCents": 1}]}},
    )
    assert bad_edit.status_code == 422, bad_edit.text
    assert "payload.lines.0.quantity" in {d["field"] for d in bad_edit.json()["details"]}
    fixed = await user.post(
        f"/api/dead-letters/{letter['id']}/requeue",
        json={"payload": {**INVOICE, "customer": "c-200"}, "reason": "the right customer"},
    )
    assert fixed.status_code == 202, fixed.text
    job = await wait_for_job(user, job_id, {"succeeded"})
    assert job["result"]["customer"] == "c-200"


async def test_a_blocking_sync_handler_does_not_hold_up_the_worker_and_a_custom_job_cancels(
    acme_worker: ExtraWorker, user: httpx.AsyncClient
) -> None:
    await announced(user)
    blocking = await submit(user, "acme.wordcount", {"text": "a b a", "blockSeconds": 1.5})
    sleeper = await submit(user, "acme.sleep", {"seconds": 60})
    await wait_for_job(user, blocking, {"running", "succeeded"})
    quick = await submit(user, "acme.invoice", INVOICE)
    assert (await wait_for_job(user, quick, {"succeeded"}))["status"] == "succeeded"
    counted = await wait_for_job(user, blocking, {"succeeded"})
    assert counted["result"] == {"words": 3, "top": [["a", 2], ["b", 1]]}
    finished = [counted["finishedAt"], (await user.get(f"/api/jobs/{quick}")).json()["finishedAt"]]
    assert finished[1] < finished[0]  # the invoice ran while wordcount blocked its thread
    await wait_for_job(user, sleeper, {"running"})
    for _ in range(100):  # the next heartbeat carries the handler's progress
        progress = (await user.get(f"/api/jobs/{sleeper}")).json()["progress"]
        if progress:
            break
        await asyncio.sleep(0.1)
    assert progress == {"percent": 0, "message": "waiting 60 s"}
    assert (await user.post(f"/api/jobs/{sleeper}/cancel")).status_code in (200, 202)
    cancelled = await wait_for_job(user, sleeper, {"cancelled"}, timeout=20)
    assert cancelled["attempts"][-1]["status"] == "cancelled"


async def test_jobs_go_only_to_workers_that_serve_their_queue(
    acme_worker: ExtraWorker, user: httpx.AsyncClient, admin: httpx.AsyncClient
) -> None:
    await announced(user)
    quick = {"minSeconds": 0, "maxSeconds": 0, "failureRate": 0, "immediateFailureRate": 0}
    simulated = [await submit(user, "simulate", quick) for _ in range(10)]
    invoiced = [await submit(user, "acme.invoice", INVOICE) for _ in range(10)]
    for job_id in simulated + invoiced:
        await wait_for_job(user, job_id, {"succeeded"})
    for job_id in simulated:
        attempts = (await admin.get(f"/api/jobs/{job_id}")).json()["attempts"]
        assert len(attempts) == 1 and attempts[0]["workerId"] != "acme-worker"
    for job_id in invoiced:
        attempts = (await admin.get(f"/api/jobs/{job_id}")).json()["attempts"]
        assert [a["workerId"] for a in attempts] == ["acme-worker"]
    log = acme_worker.log.read_text()
    assert not any(job_id in log for job_id in simulated)  # never even delivered there


async def test_a_type_with_no_live_worker_waits_then_runs_when_one_starts(
    acme_worker: ExtraWorker, user: httpx.AsyncClient
) -> None:
    await announced(user)
    await asyncio.to_thread(acme_worker.stop)
    waiting = await submit(user, "acme.invoice", INVOICE)
    await asyncio.sleep(3)
    job = (await user.get(f"/api/jobs/{waiting}")).json()
    assert job["status"] == "queued" and job["attempts"][-1]["status"] == "queued"
    types = await job_types(user)
    assert types["acme.invoice"]["liveWorkers"] == 0  # it said goodbye when it stopped
    acme_worker.start()
    await acme_worker.wait_ready()
    done = await wait_for_job(user, waiting, {"succeeded"})
    assert done["attempt"] == 1  # waited in its queue: not bounced, not retried


ROOT = Path(__file__).resolve().parents[2]


def readme_block(starting: str) -> str:
    """docs/api.md's fenced Python block that starts with ``starting`` (the README's first
    screen links there)."""
    readme = (ROOT / "docs" / "api.md").read_text()
    blocks = [part.split("```", 1)[0] for part in readme.split("```python\n")[1:]]
    return next(block for block in blocks if block.startswith(starting))


def readme_handler_is_the_example_s() -> bool:
    """docs/api.md's ``@handler(...)`` line is acme.reverse's in examples/acme_jobs."""
    decorator = readme_block("from pydantic import BaseModel, Field").split("@handler(")[1]
    arguments = decorator.split(")\n")[0]
    source = (ROOT / "examples/acme_jobs/src/acme_jobs/handlers.py").read_text()
    return arguments in source.replace("queue=QUEUE", 'queue="acme"')


async def test_the_readme_s_handler_and_client_calls_work_as_printed(
    acme_worker: ExtraWorker, stack: Stack
) -> None:
    """docs/api.md's example: its handler is examples/acme_jobs' acme.reverse, and its
    client snippet, run as printed, prints what its comment says."""
    assert readme_handler_is_the_example_s()
    env = {k: v for k, v in os.environ.items() if k != "JOBS_TOKEN"}
    env["JOBS_URL"] = stack.services["gateway"].url
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", readme_block("from jobs_client import JobsClient")],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "succeeded {'reversed': 'olleh'}"


async def test_the_example_script_submits_an_invoice_run_with_the_client(
    acme_worker: ExtraWorker, stack: Stack
) -> None:
    """examples/scripts/invoice_run.py, as a user runs it: a batch of invoices through the
    client, one for an unknown customer (dead), the rest succeeded (some after RetryLater)."""
    env = {k: v for k, v in os.environ.items() if k != "JOBS_TOKEN"}
    env["JOBS_URL"] = stack.services["gateway"].url
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(ROOT / "examples/scripts/invoice_run.py"), "--customers", "4"],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert done.returncode == 1, done.stderr  # the unknown customer's invoice is dead
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "3 of 4 invoices succeeded"
    assert sum(" dead attempt 1: unknown customer c-999" in line for line in lines) == 1
    assert sum(" succeeded attempt 2: " in line for line in lines) == 2  # busy once, then done
