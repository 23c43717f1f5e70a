"""The jobs list's search in a real browser against the real stack: a job found by the first 8
characters of its id and by a payload field, the page axe-clean (docs/dashboard.md, "Searching
jobs")."""

from __future__ import annotations

import random
import re

import httpx
import pytest
from playwright.async_api import Page, expect

from .conftest import wait_for_job
from .test_ui_e2e import QUICK, accessible, log_in, submit_api

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


async def search(page: Page, text: str) -> None:
    box = page.get_by_role("searchbox", name="Search jobs")
    await box.fill(text)
    await box.press("Enter")


async def test_find_a_job_by_an_id_prefix_and_by_a_payload_field(
    page: Page, user: httpx.AsyncClient
) -> None:
    seed = random.randrange(10**6, 2**31)
    job_id = await submit_api(user, {**QUICK, "seed": seed})
    await submit_api(user, {**QUICK, "seed": seed + 1})  # a neighbour the search leaves out
    await wait_for_job(user, job_id, {"queued", "running", "succeeded"})

    await log_in(page)
    await page.goto("/jobs")
    rows = page.get_by_test_id("job-row")

    await search(page, job_id[:8])
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_have_attribute("data-job-id", job_id)

    await search(page, f"payload.seed = {seed}")
    await expect(page).to_have_url(re.compile(rf"[?&]search=payload\.seed\+%3D\+{seed}$"))
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_have_attribute("data-job-id", job_id)
    await accessible(page, "jobs-search")

    await search(page, job_id[:6])  # too short: said beside the box, nothing sent
    form = page.get_by_role("search", name="Search jobs")
    await expect(form.get_by_role("alert")).to_contain_text("at least 8 characters")
    await expect(rows).to_have_count(1)
