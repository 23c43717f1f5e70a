"""A job's page in the browser (Debian's Chromium through Playwright) against the real stack:
its header, timeline and attempts come from one snapshot and change together through a whole
life with retries, and an id that is not the user's job is "not found" at once, with no error
logged in the browser (the ``page`` fixture fails the test on any console error)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, expect

from .conftest import PageErrors, wait_for_job
from .test_ui_e2e import QUICK, accessible, log_in, submit_api

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

# Works a while (long enough to be seen running, also by a page that loads slowly on a busy
# machine), then fails: SimulatedFailure.
WORKS_THEN_FAILS = {
    "immediateFailureRate": 0,
    "failureRate": 1,
    "minSeconds": 1.5,
    "maxSeconds": 1.5,
}

# Installed before the page's own scripts (``add_init_script``): after every change of the DOM
# from the first render on (a MutationObserver's callback runs once the render that changed it
# is committed), what the header, the latest attempt and the timeline's last step say.
SAMPLE_EVERY_RENDER = """(() => {
  const read = () => {
    const header = document.querySelector('[data-testid="job-status"]');
    if (!header) return null;
    const rows = document.querySelectorAll('[data-testid="job-attempts"] tbody tr');
    const steps = document.querySelectorAll('[data-testid="job-timeline"] > li');
    const row = rows[rows.length - 1];
    const step = steps[steps.length - 1];
    return {
      status: header.dataset.status,
      attempt: Number(header.dataset.attempt),
      attemptStatus: row ? row.dataset.status : null,
      attemptNumber: row ? Number(row.dataset.attempt) : null,
      timeline: step ? step.dataset.status : null,
    };
  };
  window.jobPageSamples = [];
  const record = () => {
    const sample = read();
    const last = window.jobPageSamples[window.jobPageSamples.length - 1];
    const changed = JSON.stringify(sample) !== JSON.stringify(last);
    if (sample && changed) window.jobPageSamples.push(sample);
  };
  new MutationObserver(record).observe(document, {
    subtree: true, childList: true, attributes: true, characterData: true,
  });
  record();
})()"""

# The latest attempt's status each job status allows (None: no attempt yet is fine too).
ATTEMPT_FOR_STATUS = {
    "queued": {"queued"},
    "running": {"running"},
    "succeeded": {"succeeded"},
}
OPEN_ATTEMPTS = {"queued", "running"}


def disagreement(sample: dict[str, Any]) -> str | None:
    """Why a rendered page contradicts itself, or None."""
    status, attempt_status = sample["status"], sample["attemptStatus"]
    if sample["timeline"] is not None and sample["timeline"] != status:
        return "the timeline's last step is not the header's status"
    if attempt_status is None:
        return None if status in {"pending", "blocked", "scheduled"} else "no attempt shown"
    if sample["attemptNumber"] != sample["attempt"]:
        return "the latest attempt is not the header's attempt"
    allowed = ATTEMPT_FOR_STATUS.get(status)
    if allowed is not None and attempt_status not in allowed:
        return f"the latest attempt is {attempt_status}"
    if allowed is None and attempt_status in OPEN_ATTEMPTS:
        return f"the latest attempt is still {attempt_status}"
    return None


async def test_a_job_page_agrees_with_itself_through_a_life_with_retries(
    page: Page, user: httpx.AsyncClient
) -> None:
    await log_in(page)
    job_id = await submit_api(user, WORKS_THEN_FAILS, maxAttempts=2)
    await page.add_init_script(SAMPLE_EVERY_RENDER)
    await page.goto(f"/jobs/{job_id}")  # possibly before the scheduler recorded it
    status = page.get_by_test_id("job-status")

    # attempt 1 fails and is retried; attempt 2 fails too: dead, with attempt 2's error
    await expect(status).to_have_attribute("data-status", "dead", timeout=30_000)
    error = page.get_by_test_id("job-current-error")
    await expect(error).to_have_attribute("data-attempt", "2")
    await expect(error).to_contain_text("SimulatedFailure")

    # run again with a payload that succeeds: attempt 3
    job = (await user.get(f"/api/jobs/{job_id}")).json()
    requeue = await user.post(
        f"/api/dead-letters/{job['deadLetter']['id']}/requeue", json={"payload": QUICK}
    )
    assert requeue.status_code == 202, requeue.text
    await expect(status).to_have_attribute("data-status", "succeeded", timeout=30_000)
    await expect(page.get_by_test_id("job-attempts").locator("tbody tr")).to_have_count(3)
    # the old error is history (the attempts table), not the job's state
    await expect(error).to_have_count(0)
    await expect(page.get_by_test_id("job-attempt-now")).to_contain_text("(attempt 3)")
    await accessible(page, "job-page-after-retries")

    samples: list[dict[str, Any]] = await page.evaluate("window.jobPageSamples")
    steps = " > ".join(f"{s['status']}#{s['attempt']}" for s in samples)
    print(f"job page: {len(samples)} distinct renders sampled: {steps}")
    wrong = [(sample, why) for sample in samples if (why := disagreement(sample))]
    assert wrong == [], samples
    seen = {sample["status"] for sample in samples}
    assert {"dead", "succeeded"} <= seen, samples
    assert len(samples) >= 3, samples


async def test_an_unknown_or_foreign_job_id_is_not_found_at_once(
    page: Page, admin: httpx.AsyncClient, page_errors: PageErrors
) -> None:
    foreign = await submit_api(admin, QUICK)  # the admin's own: not the user's to see
    everything = {"pending", "queued", "running", "succeeded", "failed", "dead", "scheduled"}
    await wait_for_job(admin, foreign, everything)  # recorded
    await log_in(page)
    answers: list[tuple[str, int]] = []
    page.on(
        "response",
        lambda response: (
            answers.append((response.url, response.status)) if "/snapshot" in response.url else None
        ),
    )
    for job_id in (str(uuid.uuid4()), foreign):
        started = time.monotonic()
        await page.goto(f"/jobs/{job_id}")
        await expect(page.get_by_role("heading", name="Job not found")).to_be_visible()
        await expect(page.get_by_test_id("job-not-found")).to_contain_text(job_id)
        print(f"job page: not found shown {time.monotonic() - started:.2f} s after navigating")
        asked = [status for url, status in answers if job_id in url]
        # one read (and at most the live connection's catch-up): no retry loop, no 404
        assert 1 <= len(asked) <= 2 and set(asked) == {200}, answers
    await accessible(page, "job-not-found")
    assert page_errors.refused == []
