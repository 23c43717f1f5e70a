"""The web UI in a real browser (Debian's Chromium through Playwright) against the real stack:
the gateway serves the build, the API and the live WebSocket from one origin. Every test fails
on a console error or an uncaught exception in the page; every page is checked with axe-core
(no serious or critical violation) and saved as a screenshot (var/artifacts/ui/)."""

from __future__ import annotations

import asyncio
import re
import uuid
from datetime import timedelta
from typing import Any

import aio_pika
import httpx
import pytest
from playwright.async_api import Page, expect

from jobs_common.contracts import JobTypeInfo, WorkerTypes, utcnow
from jobs_common.topology import JOBS_EXCHANGE, TYPES
from jobs_testing.stack import Stack

from .conftest import PageErrors, axe_violations, screenshot, wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

QUICK = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0.2, "maxSeconds": 0.4}
LONG = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 60, "maxSeconds": 60}
FAILS_AT_ONCE = {"immediateFailureRate": 1, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}


async def log_in(page: Page, email: str = "user@test.com", password: str = "user123") -> None:
    await page.goto("/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_test_id("live-status")).to_have_attribute("data-live-status", "live")


async def accessible(page: Page, name: str) -> None:
    """No serious axe violation on the page as it is now; and a screenshot of it."""
    await screenshot(page, name)
    assert await axe_violations(page) == [], name


async def submit_api(client: httpx.AsyncClient, payload: dict[str, Any], **extra: Any) -> str:
    body = {"type": "simulate", "priority": 2, "payload": payload, **extra}
    answer = await client.post("/api/jobs", json=body)
    assert answer.status_code == 202, answer.text
    job_id: str = answer.json()["jobId"]
    return job_id


async def test_log_in_submit_from_the_form_and_watch_it_succeed_live(page: Page) -> None:
    await page.goto("/jobs")  # a protected page: to the login, then back
    await expect(page).to_have_url(re.compile(r"/login"))
    await accessible(page, "login")
    await log_in(page)
    await expect(page).to_have_url(re.compile(r"/jobs"))

    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Submit").click()
    await page.get_by_label("Job type").select_option("simulate")
    await page.get_by_label("Min seconds").fill("1")
    await page.get_by_label("Max seconds").fill("1.5")
    await accessible(page, "submit")
    await page.get_by_role("button", name="Submit job").click()
    status = page.get_by_test_id("submitted-job-status")
    # Live: pushed over the WebSocket as the scheduler commits each change.
    await expect(status).to_have_attribute("data-status", "running", timeout=20_000)
    await expect(status).to_have_attribute("data-status", "succeeded", timeout=20_000)

    await page.get_by_test_id("submitted-job-link").click()
    await expect(page.get_by_test_id("job-status")).to_have_attribute("data-status", "succeeded")
    await expect(page.get_by_test_id("job-logs")).to_contain_text("succeeded")
    # The page renders whole snapshots: the badge and the attempts come from the same read.
    await expect(page.get_by_test_id("job-attempts")).to_contain_text("succeeded")
    await accessible(page, "job-detail")


async def test_the_api_s_validation_errors_show_at_their_fields(
    page: Page, page_errors: PageErrors
) -> None:
    page_errors.allow("status of 422")  # the browser logs the refused request itself
    await log_in(page)
    await page.goto("/submit")
    await page.get_by_label("Job type").select_option("email")
    # the fields of the email type's schema; a required one's label ends with " *"
    await page.get_by_role("textbox", name="To", exact=True).fill("someone@example.com")
    await page.get_by_role("textbox", name="Subject", exact=True).fill("hello")
    await page.get_by_role("textbox", name="Body", exact=True).fill("hi")
    await page.get_by_label("Depends on").fill(str(uuid.uuid4()))  # unknown: only the API knows
    await page.get_by_role("button", name="Submit job").click()
    await expect(page.get_by_test_id("error-summary")).to_be_visible()
    await expect(page.get_by_test_id("error-dependsOn")).to_be_visible()
    await expect(page.get_by_label("Depends on")).to_have_attribute("aria-invalid", "true")
    await accessible(page, "submit-validation-error")


GREETING_SCHEMA: dict[str, Any] = {  # as pydantic writes it for a handler's payload model
    "$defs": {"Tone": {"enum": ["warm", "formal"], "title": "Tone", "type": "string"}},
    "additionalProperties": False,
    "properties": {
        "name": {"description": "Who to greet", "maxLength": 40, "title": "Name", "type": "string"},
        "tone": {"$ref": "#/$defs/Tone", "default": "warm"},
        "times": {"default": 1, "maximum": 3, "minimum": 1, "title": "Times", "type": "integer"},
    },
    "required": ["name"],
    "title": "Greeting",
    "type": "object",
}


async def announce_idle_type(stack: Stack, job_type: str) -> None:
    """Announce a custom type as a worker that has since gone quiet: the registry knows the
    type, no live worker serves it (no job of it is submitted: it would wait in its queue)."""
    announcement = WorkerTypes(
        worker_id=f"e2e-gone-{uuid.uuid4().hex[:6]}",
        types=[
            JobTypeInfo(
                job_type=job_type,
                payload_schema=GREETING_SCHEMA,
                timeout_seconds=30,
                max_attempts=2,
                queue="e2e-idle",
            )
        ],
        sent_at=utcnow() - timedelta(minutes=10),
    )
    connection = await aio_pika.connect(stack.config.amqp_url)
    async with connection:
        channel = await connection.channel()
        exchange = await channel.get_exchange(JOBS_EXCHANGE)
        await exchange.publish(aio_pika.Message(body=announcement.to_json()), routing_key=TYPES)


async def test_the_submit_form_builds_a_custom_type_s_form_from_its_schema(
    page: Page, stack: Stack, user: httpx.AsyncClient
) -> None:
    job_type = f"e2e.greet_{uuid.uuid4().hex[:6]}"
    await announce_idle_type(stack, job_type)
    for _ in range(100):  # recorded by the submission service, in MongoDB
        listed = (await user.get("/api/job-types")).json()["types"]
        if any(t["type"] == job_type for t in listed):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"{job_type} was not listed: {listed}")
    await log_in(page)
    # The overview's reads answer together; on a busy machine they take longer than 5 s.
    await expect(page.get_by_test_id("types-without-workers")).to_contain_text(
        job_type, timeout=30_000
    )
    await accessible(page, "overview-type-without-worker")

    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Submit").click()
    info = page.get_by_test_id("job-type-info")  # the built-ins, served by the stack's workers
    served = re.compile(r"Built-in type · queue default · \d+ live workers?")
    await expect(info).to_contain_text(served)
    await page.get_by_label("Job type").select_option(job_type)
    await expect(info).to_contain_text("queue e2e-idle · no live worker")
    name = page.get_by_role("textbox", name="Name", exact=True)
    await expect(name).to_have_attribute("aria-required", "true")
    await expect(page.get_by_role("combobox", name="Tone")).to_have_value('"warm"')
    await expect(page.get_by_role("textbox", name="Times")).to_have_value("1")
    await page.get_by_role("button", name="Submit job").click()
    await expect(page.get_by_test_id("error-payload.name")).to_have_text("Required")
    await expect(name).to_have_attribute("aria-invalid", "true")
    await accessible(page, "submit-custom-type")


async def test_cancel_a_running_job_from_its_page(page: Page, user: httpx.AsyncClient) -> None:
    job_id = await submit_api(user, LONG)
    await log_in(page)
    await page.goto(f"/jobs/{job_id}")
    status = page.get_by_test_id("job-status")
    await expect(status).to_have_attribute("data-status", "running", timeout=20_000)
    await page.get_by_role("button", name="Cancel job").click()
    await page.get_by_role("button", name="Yes, cancel job").click()
    await expect(status).to_have_attribute("data-status", "cancelled", timeout=30_000)
    assert (await wait_for_job(user, job_id, {"cancelled"}))["status"] == "cancelled"


async def test_requeue_a_dead_letter_with_an_edited_payload(
    page: Page, user: httpx.AsyncClient
) -> None:
    job_id = await submit_api(user, FAILS_AT_ONCE, maxAttempts=1)
    await wait_for_job(user, job_id, {"dead"})
    await log_in(page)
    await page.goto("/dead-letters?tab=letters")
    row = page.locator(f'[data-testid="dead-letter-row"][data-job-id="{job_id}"]')
    await row.get_by_role("button", name=re.compile("^Inspect")).click()
    panel = page.get_by_test_id("dead-letter-inspect")
    await accessible(page, "dead-letters")
    await panel.get_by_label("Requeue with an edited payload").check()
    editor = panel.get_by_label("Payload (JSON object)")
    await editor.fill("{not json")
    await panel.get_by_role("button", name="Requeue with this payload").click()
    await expect(page.get_by_test_id("requeue-payload-error")).to_be_visible()
    await editor.fill(
        '{"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.1}'
    )
    await panel.get_by_role("button", name="Requeue with this payload").click()
    job = await wait_for_job(user, job_id, {"succeeded"})
    assert job["payload"]["immediateFailureRate"] == 0


async def test_create_and_pause_a_schedule(page: Page, user: httpx.AsyncClient) -> None:
    name = f"nightly-{uuid.uuid4().hex[:6]}"
    await log_in(page)
    await page.goto("/schedules")
    await page.get_by_label("Name").fill(name)
    await page.get_by_label("Cron expression").fill("30 2 * * *")
    await expect(page.get_by_test_id("cron-preview").locator("[data-fire-time]")).to_have_count(5)
    await accessible(page, "schedules")
    await page.get_by_role("button", name="Create schedule").click()
    row = page.locator(f'[data-testid="schedule-row"][data-schedule-name="{name}"]')
    await expect(row.get_by_test_id("schedule-state")).to_contain_text("active")
    await row.get_by_role("button", name=f"Pause schedule {name}").click()
    await expect(row.get_by_test_id("schedule-state")).to_contain_text("paused")
    listed = (await user.get("/api/schedules", params={"pageSize": 100})).json()
    [schedule] = [s for s in listed["items"] if s["name"] == name]
    assert schedule["paused"] is True, schedule


@pytest.mark.parametrize("width", [1280, 390])
async def test_every_page_is_accessible_at_laptop_and_phone_widths(
    page: Page, admin: httpx.AsyncClient, width: int
) -> None:
    job_id = await submit_api(admin, QUICK)
    await wait_for_job(admin, job_id, {"succeeded"})
    spec = {"type": "simulate", "priority": 1, "payload": QUICK}
    batch = await admin.post("/api/batches", json={"name": f"nightly-{width}", "jobs": [spec] * 3})
    assert batch.status_code == 202, batch.text
    batch_id = batch.json()["batchId"]
    await page.set_viewport_size({"width": width, "height": 800})
    await log_in(page, "admin@test.com", "admin123")
    pages = {
        "overview": "/",
        "jobs": "/jobs",
        "job": f"/jobs/{job_id}",
        "submit-batch": "/submit?mode=batch",
        "dead-letter-groups": "/dead-letters",
        "batches": "/batches",
        "workers": "/workers",
        "register": "/register",
    }
    for name, path in pages.items():
        if name == "register":
            await page.get_by_role("button", name=re.compile("Log out", re.I)).click()
        await page.goto(path)
        await page.wait_for_load_state("networkidle")
        await expect(page.get_by_role("main")).to_be_visible()
        if name == "batches":  # listed newest first, with its progress
            card = page.locator(f'[data-testid="batch-progress"][data-batch-id="{batch_id}"]')
            await expect(card).to_contain_text("3 of 3", timeout=20_000)
        await accessible(page, f"{name}-{width}")
