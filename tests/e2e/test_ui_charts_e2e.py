"""The overview's charts and figures of now in the browser (issue 35, points 1 and 4): each
range moves the charts' window, the page stays accessible, and under a batch the overview's
running count agrees with the workers' in-flight totals the Workers page lists."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from playwright.async_api import Page, expect

from .test_ui_e2e import accessible, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

# range: (its radio's name, points, seconds per point)
RANGES = {
    "15m": ("15 min", 15, 60),
    "6h": ("6 hours", 72, 300),
    "24h": ("24 hours", 96, 900),
    "7d": ("7 days", 168, 3600),
    "1h": ("1 hour", 60, 60),
}
BATCH = 16
STEADY = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 12, "maxSeconds": 12}


async def test_each_range_moves_the_charts_window(page: Page) -> None:
    await log_in(page, "admin@test.com", "admin123")
    window = page.get_by_test_id("charts-window")
    # the first read of a freshly started stack on a busy machine: more than expect's 5 s
    await expect(window).to_have_attribute("data-range", "1h", timeout=15_000)
    captions = {"1h": await window.inner_text()}
    for range_, (label, points, seconds) in RANGES.items():
        await page.get_by_role("radio", name=label, exact=True).check()
        await expect(window).to_have_attribute("data-range", range_)
        await expect(window).to_have_attribute("data-points", str(points))
        await expect(window).to_have_attribute("data-bucket-seconds", str(seconds))
        captions[range_] = await window.inner_text()
    # every range names its own window (15 min and 1 h differ by where they start)
    assert len(set(captions.values())) == len(RANGES), captions
    await expect(page.get_by_test_id("chart-throughput")).to_be_visible()
    await expect(page.get_by_test_id("chart-wait")).to_be_visible()
    await accessible(page, "overview-charts")


async def workers_in_flight(admin: httpx.AsyncClient) -> int:
    """The Workers page's totals: the jobs each worker it shows (not dead) reports running."""
    listed = await admin.get("/api/workers", params={"includeDeadForMinutes": 0})
    assert listed.status_code == 200, listed.text
    return sum(w["activeJobs"] for w in listed.json()["items"] if w["status"] != "dead")


async def test_the_overview_s_running_count_agrees_with_the_workers_in_flight(
    page: Page, admin: httpx.AsyncClient
) -> None:
    await log_in(page, "admin@test.com", "admin123")
    running = page.get_by_test_id("now-running")
    await expect(running).to_be_visible()
    jobs = [{"type": "simulate", "priority": 2, "payload": STEADY}] * BATCH
    batch = await admin.post("/api/batches", json={"name": "charts-agreement", "jobs": jobs})
    assert batch.status_code == 202, batch.text

    # the batch settles on the workers: the same in-flight total twice, half a second apart
    settled, previous = None, -1
    for _ in range(40):
        now = await workers_in_flight(admin)
        if now >= BATCH and now == previous:
            settled = now
            break
        previous = now
        await asyncio.sleep(0.5)
    assert settled is not None, f"the batch never settled on the workers (last {previous})"

    # within a second or so the overview shows that many running, and the same in flight
    await expect(running).to_have_text(str(settled), timeout=2_500)
    await expect(page.get_by_test_id("now-in-flight")).to_have_text(str(settled), timeout=2_500)
    assert await workers_in_flight(admin) == settled  # still the batch's steady state
