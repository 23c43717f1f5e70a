"""The console tells the truth during and after faults (issue 19, point 7), in Debian's
Chromium against real processes: the Workers page never calls a healthy worker dead while the
scheduler is paused (workers are judged against how far it has read heartbeats, not against
the wall clock), and a job page follows its job to the end without a reload."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, Route, expect

from jobs_testing.stack import Stack

from .conftest import screenshot, wait_for_job
from .test_pipeline_e2e import TERMINAL
from .test_ui_e2e import log_in, submit_api

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ONE_SECOND = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 1, "maxSeconds": 1}
PAUSE_SECONDS = 25  # well past DASHBOARD_WORKER_DEAD_AFTER_SECONDS (10), below the staleness (90)

# Every data-status a worker card takes, recorded in the page as it changes (not sampled).
RECORD_CARD_STATUSES = """() => {
  window.__cardStatuses = [];
  const record = () => {
    for (const card of document.querySelectorAll('[data-testid="worker-card"]')) {
      window.__cardStatuses.push([card.dataset.workerId, card.dataset.status]);
    }
  };
  record();
  new MutationObserver(record).observe(document.body, {
    subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'],
  });
}"""


def work(seconds: float) -> dict[str, float]:
    return {
        "immediateFailureRate": 0,
        "failureRate": 0,
        "minSeconds": seconds,
        "maxSeconds": seconds,
    }


async def test_a_paused_scheduler_never_makes_the_workers_page_call_a_healthy_worker_dead(
    page: Page, stack: Stack, admin: httpx.AsyncClient
) -> None:
    await log_in(page, "admin@test.com", "admin123")
    await page.goto("/workers")
    alive = page.locator('[data-testid="worker-card"][data-status="alive"]')
    await expect(alive).to_have_count(stack.config.workers, timeout=30_000)
    healthy = {await card.get_attribute("data-worker-id") for card in await alive.all()}
    # Load: both workers are busy while the scheduler stands still.
    ids = [await submit_api(admin, work(4 + i % 3)) for i in range(6)]
    for job_id in ids[:2]:
        await wait_for_job(admin, job_id, {"running", *TERMINAL}, timeout=60)
    await page.evaluate(RECORD_CARD_STATUSES)

    process = stack.services["scheduler"].process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)  # the workers keep heartbeating into the queue
    try:
        # The page polls every 3 s; the dashboard sees the scheduler's reading stand still.
        await expect(page.get_by_test_id("workers-horizon")).to_be_visible(timeout=20_000)
        await asyncio.sleep(PAUSE_SECONDS)
        await expect(alive).to_have_count(len(healthy))
        await screenshot(page, "workers-scheduler-paused")
    finally:
        os.kill(process.pid, signal.SIGCONT)
        await asyncio.to_thread(stack.wait_ready, 60.0, ["scheduler"])

    seen: list[list[str]] = await page.evaluate("() => window.__cardStatuses")
    assert seen, "no worker card was seen"
    called_dead = {worker for worker, status in seen if worker in healthy and status != "alive"}
    assert called_dead == set(), seen
    # Caught up: the note goes away, nothing ran twice, and the stack takes new work.
    await expect(page.get_by_test_id("workers-horizon")).to_have_count(0, timeout=30_000)
    jobs = [await wait_for_job(admin, job_id, TERMINAL, timeout=120) for job_id in ids]
    assert [(j["status"], len(j["attempts"])) for j in jobs] == [("succeeded", 1)] * len(ids)
    after = await submit_api(admin, ONE_SECOND)
    assert (await wait_for_job(admin, after, TERMINAL))["status"] == "succeeded"


async def the_whole_end_is_shown(page: Page, user: httpx.AsyncClient, job_id: str) -> None:
    """Header, timeline, attempt and result all say the job succeeded."""
    await expect(page.get_by_test_id("job-status")).to_have_attribute(
        "data-status", "succeeded", timeout=60_000
    )
    await expect(page.get_by_test_id("job-timeline").locator("li").last).to_contain_text(
        "succeeded"
    )
    attempts = page.get_by_test_id("job-attempts").locator("tbody tr")
    await expect(attempts).to_have_count(1)
    await expect(attempts.first).to_contain_text("succeeded")
    result = page.get_by_test_id("job-result")
    await expect(result).not_to_contain_text("No result")
    stored: dict[str, Any] = await wait_for_job(user, job_id, {"succeeded"})
    assert stored["result"], stored
    await expect(result.locator("pre")).to_contain_text(f'"{next(iter(stored["result"]))}"')


async def test_a_job_page_follows_its_job_to_the_end_without_a_reload(
    page: Page, user: httpx.AsyncClient
) -> None:
    await log_in(page)
    # Held `scheduled` for a few seconds, then running a few more: the page is open long before
    # the job ends, even when a loaded machine takes seconds to open it.
    job_id = await submit_api(user, work(4), delaySeconds=4)
    await wait_for_job(user, job_id, {"scheduled"}, timeout=30)
    await page.goto(f"/jobs/{job_id}")
    await expect(page.get_by_test_id("job-status")).to_have_attribute(
        "data-status", re.compile("^(scheduled|running)$")
    )
    await page.evaluate("() => { window.__notReloaded = true; }")

    await the_whole_end_is_shown(page, user, job_id)
    assert await page.evaluate("() => window.__notReloaded === true"), "the page was reloaded"


async def test_a_job_page_whose_first_answer_is_overtaken_by_the_job_still_shows_the_end(
    page: Page, user: httpx.AsyncClient
) -> None:
    """Under load the page's first request is slow: it is read while the job waits, and the
    job's live changes arrive before its answer does. A refetch asked meanwhile joins that
    request, so without a second look the page would stay at the answer's old state."""
    await log_in(page)
    # Not ended for about 8 s (4 s scheduled, 4 s running): the first answer is read before the
    # end even when a loaded machine takes seconds to open the page.
    job_id = await submit_api(user, work(4), delaySeconds=4)
    await wait_for_job(user, job_id, {"scheduled"}, timeout=30)
    read: list[str] = []
    ended = asyncio.Event()

    async def slow_first_answer(route: Route) -> None:
        if read:
            await route.continue_()
            return
        response = await route.fetch()  # read now, while the job has not ended
        body = await response.body()
        read.append(json.loads(body)["job"]["status"])
        await ended.wait()  # ... and answered once the job ended
        await route.fulfill(response=response, body=body)

    await page.route(re.compile(rf"/api/jobs/{job_id}/snapshot$"), slow_first_answer)
    await page.goto(f"/jobs/{job_id}")
    await expect(page.get_by_test_id("live-status")).to_have_attribute("data-live-status", "live")
    await wait_for_job(user, job_id, {"succeeded"}, timeout=60)
    # The answer comes a while after the last change: past the live throttle's refetch (1 s),
    # which joined the slow request too.
    await asyncio.sleep(3)
    ended.set()
    # Read before the end (scheduled, or running if the page was slow to open): the live
    # changes since then all came before the answer.
    assert len(read) == 1 and read[0] not in TERMINAL, read
    await the_whole_end_is_shown(page, user, job_id)
