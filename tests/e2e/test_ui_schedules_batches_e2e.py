"""Schedules and batches in the console (issue 35, point 6) in Debian's Chromium against the
real stack: a user edits a schedule's cron and payload and runs it now (the run is a job of the
schedule, listed in its fires, and runs); finds a batch in the batches list by the short id the
console shows, opens its page and retries its dead jobs (each runs again). Every page is
checked with axe-core and saved as a screenshot (var/artifacts/ui/)."""

from __future__ import annotations

import asyncio
import re
import uuid

import httpx
import pytest
from playwright.async_api import Page, expect

from .conftest import wait_for_job
from .test_ui_e2e import FAILS_AT_ONCE, QUICK, accessible, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


async def test_edit_a_schedule_and_run_it_now(page: Page, user: httpx.AsyncClient) -> None:
    name = f"edited-{uuid.uuid4().hex[:6]}"
    created = await user.post(
        "/api/schedules",
        json={
            "name": name,
            "cron": "30 2 * * *",
            "timezone": "UTC",
            "jobTemplate": {"type": "simulate", "priority": 2, "payload": QUICK},
        },
    )
    assert created.status_code == 201, created.text
    schedule_id = created.json()["id"]

    await log_in(page)
    await page.goto("/schedules")
    row = page.locator(f'[data-testid="schedule-row"][data-schedule-name="{name}"]')
    await row.get_by_role("button", name=f"Edit schedule {name}").click()
    form = page.get_by_role("form", name=f"Edit schedule {name}")
    await expect(form.get_by_label("Max seconds")).to_have_value("0.4")
    await form.get_by_label("Cron expression").fill("45 3 * * 1-5")
    await form.get_by_label("Max seconds").fill("0.3")
    await accessible(page, "schedule-edit")
    await form.get_by_role("button", name="Save changes").click()
    await expect(row).to_contain_text("45 3 * * 1-5")
    stored = (await user.get(f"/api/schedules/{schedule_id}")).json()
    assert (stored["cron"], stored["jobTemplate"]["payload"]["maxSeconds"]) == ("45 3 * * 1-5", 0.3)
    next_fire = stored["nextFireAt"]

    await row.get_by_role("button", name=f"Run now: schedule {name}").click()
    fired = page.get_by_test_id("fire-history").get_by_role(
        "link", name=re.compile(r"^[0-9a-f]{8}$")
    )
    await expect(fired).to_have_count(1)
    detail = (await user.get(f"/api/schedules/{schedule_id}")).json()
    [fire] = detail["fires"]
    assert detail["nextFireAt"] == next_fire  # a run now leaves the cron's next fire alone
    job = await wait_for_job(user, fire["jobId"], {"succeeded"}, timeout=15)
    assert (job["scheduleId"], job["payload"]["maxSeconds"]) == (schedule_id, 0.3)
    await fired.click()
    await expect(page).to_have_url(re.compile(f"/jobs/{fire['jobId']}"))


async def test_open_a_batch_from_the_list_and_retry_its_dead_jobs(
    page: Page, user: httpx.AsyncClient
) -> None:
    dies = {"type": "simulate", "priority": 3, "payload": FAILS_AT_ONCE, "maxAttempts": 1}
    runs = {"type": "simulate", "priority": 3, "payload": QUICK}
    name = f"retried-{uuid.uuid4().hex[:6]}"
    batch = await user.post("/api/batches", json={"name": name, "jobs": [dies, dies, runs]})
    assert batch.status_code == 202, batch.text
    batch_id, job_ids = batch.json()["batchId"], batch.json()["jobIds"]
    for job_id, ends in zip(job_ids, ("dead", "dead", "succeeded"), strict=True):
        await wait_for_job(user, job_id, {ends}, timeout=15)

    await log_in(page)
    await page.goto("/batches")
    filter_box = page.get_by_role("search", name="Filter batches")
    await filter_box.get_by_label("Batch id").fill(batch_id[:6])
    await filter_box.get_by_role("button", name="Filter").click()
    await expect(filter_box).to_contain_text("Type at least 8 characters of the id")
    await filter_box.get_by_label("Batch id").fill(batch_id[:8])
    await filter_box.get_by_role("button", name="Filter").click()
    cards = page.get_by_test_id("batch-progress")
    await expect(cards).to_have_count(1)
    await accessible(page, "batches-filtered")
    await cards.get_by_role("link", name=f"Open batch {name}").click()
    await expect(page).to_have_url(re.compile(f"/batches/{batch_id}"))
    await expect(page.get_by_test_id("batch-facts")).to_contain_text("user@test.com")
    await expect(page.get_by_test_id("batch-jobs").get_by_role("row")).to_have_count(4)
    await accessible(page, "batch")

    await page.get_by_role("button", name="Retry 2 dead jobs").click()
    await page.get_by_role("button", name="Yes, retry them").click()
    await expect(page.get_by_text("Retry asked for 2 dead jobs")).to_be_visible()
    for job_id in job_ids[:2]:  # each ran again, from a fresh attempt, and died again
        await wait_until_attempt(user, job_id, 2)


async def wait_until_attempt(client: httpx.AsyncClient, job_id: str, attempt: int) -> None:
    async with asyncio.timeout(15):
        while True:
            job = (await client.get(f"/api/jobs/{job_id}")).json()
            if job["attempt"] >= attempt and job["status"] == "dead":
                return
            await asyncio.sleep(0.2)
