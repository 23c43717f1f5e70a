"""Quiet and stop on a real worker, from the console's Workers page: a worker process of its
own (one job type on a queue no other worker serves) runs two jobs; the admin quiets it (a new
job stays queued), then stops it: it finishes both jobs and exits. The page shows what it
runs, its state as it changes, and passes axe."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect

from jobs_testing.extra_worker import ExtraWorker
from jobs_testing.stack import Stack

from .conftest import wait_for_job
from .test_ui_e2e import accessible, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

JOB_TYPE = "e2e.hold"
HANDLERS = f'''
"""A job that holds its worker a while (the Workers page's browser test)."""
import asyncio

from pydantic import BaseModel, Field

from jobs_sdk import JobContext, handler


class Hold(BaseModel):
    seconds: float = Field(ge=0, le=60)


@handler("{JOB_TYPE}", payload=Hold, queue="e2e-hold", timeout_seconds=60)
async def hold(ctx: JobContext, payload: Hold) -> dict[str, float]:
    await asyncio.sleep(payload.seconds)
    return {{"held": payload.seconds}}
'''


@pytest.fixture
async def hold_worker(stack: Stack, tmp_path: Path) -> AsyncIterator[ExtraWorker]:
    """A worker serving only ``e2e.hold``, from a module written for this test."""
    (tmp_path / "e2e_hold_handlers.py").write_text(HANDLERS)
    worker = ExtraWorker(
        stack,
        tmp_path / "hold-worker.log",
        {
            "WORKER_HANDLER_MODULES": "e2e_hold_handlers",
            "WORKER_HANDLER_ENTRY_POINTS": "false",
            "PYTHONPATH": str(tmp_path),
        },
        worker_id=f"e2e-hold-{uuid.uuid4().hex[:6]}",
    )
    worker.start()
    try:
        await worker.wait_ready()
        yield worker
    finally:
        worker.stop()


async def submit_hold(client: httpx.AsyncClient, seconds: float) -> str:
    """Submit once the worker's announcement of the type reached the registry."""
    for _ in range(100):
        answer = await client.post(
            "/api/jobs", json={"type": JOB_TYPE, "priority": 2, "payload": {"seconds": seconds}}
        )
        if answer.status_code == 202:
            job_id: str = answer.json()["jobId"]
            return job_id
        assert answer.status_code == 422, answer.text  # not announced yet
        await asyncio.sleep(0.1)
    raise AssertionError(f"{JOB_TYPE} was never announced")


async def test_quiet_and_stop_on_a_real_worker(
    page: Page, hold_worker: ExtraWorker, admin: httpx.AsyncClient, user: httpx.AsyncClient
) -> None:
    worker_id = hold_worker.env["WORKER_WORKER_ID"]
    held = [await submit_hold(admin, 10) for _ in range(2)]
    await log_in(page, "admin@test.com", "admin123")
    await page.goto("/workers")
    card = page.locator(f'[data-testid="worker-card"][data-worker-id="{worker_id}"]')
    jobs = card.get_by_test_id("worker-job")
    await expect(jobs).to_have_count(2)
    for job_id in held:
        await expect(card.locator(f'a[href="/jobs/{job_id}"]')).to_be_visible()
    elapsed = jobs.first.get_by_test_id("worker-job-elapsed")
    await expect(elapsed).to_have_text(re.compile(r"^\d+ s$"))
    await expect(elapsed).not_to_have_text(await elapsed.inner_text())  # it ticks

    refused = await user.post(f"/api/workers/{worker_id}/quiet")  # admins only, server side
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")

    await card.get_by_test_id("worker-quiet").click()
    await card.get_by_test_id("worker-quiet-confirm").click()
    await expect(card).to_have_attribute("data-status", "quiet")
    listed = {w["id"]: w for w in (await admin.get("/api/workers")).json()["items"]}
    assert (listed[worker_id]["status"], listed[worker_id]["quiet"]) == ("quiet", True)
    late = await submit_hold(admin, 0)  # a quiet worker takes no new job: it waits
    await card.get_by_test_id("worker-stop").click()
    await accessible(page, "workers-stop-confirm")
    await card.get_by_test_id("worker-stop-confirm").click()
    await expect(card).to_have_attribute("data-status", "stopping")

    # It exits on its own once its current jobs have finished: both succeeded, none abandoned.
    assert hold_worker.process is not None
    assert await asyncio.to_thread(hold_worker.process.wait, 30) == 0
    for job_id in held:
        done = await wait_for_job(admin, job_id, {"succeeded", "dead", "cancelled"}, timeout=10)
        assert (done["status"], done["attempt"]) == ("succeeded", 1)
    waiting = (await admin.get(f"/api/jobs/{late}")).json()
    # Never started: held back (no live worker serves the type now) or left in its queue.
    assert (waiting["status"], waiting["startedAt"]) == ("queued", None)
    await expect(card.get_by_test_id("worker-job")).to_have_count(0)
    await page.set_viewport_size({"width": 390, "height": 844})  # a phone: compact, no sideways
    size = await page.evaluate("[document.documentElement.scrollWidth, document.body.scrollHeight]")
    print(f"workers page on a 390 px phone: {size[0]} x {size[1]} px")
    assert size[0] <= 390
    assert (await admin.post(f"/api/jobs/{late}/cancel", json={})).status_code in (200, 202)
