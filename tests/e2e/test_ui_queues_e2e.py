"""The console's Queues page (issue 33, point 5) in Debian's Chromium against the real stack:
an admin of a project creates a queue with a limit, finds it in the table, changes the limit,
pauses and resumes it in one click each, and is told why a queue with unfinished jobs cannot
be deleted, and sets the project's weight and a quota in the "Project settings" panel (the API
answers them), and reads the project's usage (the delayed job below counted as submitted); a
viewer of the project sees its queues and settings with no control to change them, and why,
and each queue's unfinished jobs by state and priority and its last hour (the delayed job
waiting in ``default`` once the scheduler sampled a minute with it).
Every test fails on a console error it did not expect; each page is checked with axe-core
(also at a phone's 390 px, where the page must not scroll sideways) and saved as a screenshot
(var/artifacts/ui/).

One team for the module, made through the API by users registered for it: an owner and a
viewer of an organization's project, a queue with limits made through the API for the viewer
to look at, and a job delayed by an hour (recorded as ``scheduled``: it makes the project's
``default`` queue and keeps it busy), cancelled at the end."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.async_api import Locator, Page, ViewportSize, expect

from jobs_testing.gateway_session import signed_in

from .conftest import PageErrors, wait_for_job
from .test_ui_e2e import accessible, log_in
from .test_ui_tenancy_e2e import PASSWORD, created, delayed_job, register

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(150)]

PHONE: ViewportSize = {"width": 390, "height": 800}


@dataclass(frozen=True)
class Team:
    project: str
    owner: str
    viewer: str
    watched: str  # a queue made through the API, with limits
    busy_job: str  # delayed: the project's default queue has an unfinished job


def queue_name(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:8]}"  # ^[a-z][a-z0-9_-]{0,62}$


async def queue_of(api: httpx.AsyncClient, project: str, name: str) -> dict[str, Any] | None:
    answer = await api.get("/api/queues", params={"name": name}, headers={"X-Project": project})
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items[0] if items else None


async def readable(gateway_url: str, email: str, project: str, name: str) -> None:
    """Until ``email`` reads the project's queue: a new membership reaches the gateway's
    cached grants a moment later (docs/tenancy.md), and until then the project is a 404."""
    deadline = time.monotonic() + 15
    async with signed_in(gateway_url, email, PASSWORD) as api:
        while True:
            answer = await api.get(
                "/api/queues", params={"name": name}, headers={"X-Project": project}
            )
            if answer.status_code == 200 and answer.json()["items"]:
                return
            assert time.monotonic() < deadline, answer.text
            await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
async def team(gateway_url: str) -> AsyncIterator[Team]:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as http:
        owner, viewer = [await register(http, r) for r in ("qowner", "qviewer")]
    watched = queue_name("watched")
    async with signed_in(gateway_url, owner, PASSWORD) as api:
        org = created(
            await api.post("/api/organizations", json={"name": f"Q {uuid.uuid4().hex[:6]}"})
        )
        project = created(
            await api.post("/api/projects", json={"orgId": org["id"], "name": "Queues"})
        )["id"]
        created(
            await api.post(
                f"/api/organizations/{org['id']}/members", json={"email": viewer, "role": "viewer"}
            )
        )
        limits = {
            "name": watched,
            "maxConcurrency": 3,
            "rateLimit": {"limit": 600, "per": "minute"},
            "concurrencyKey": {"field": "customerId", "limit": 1},
            "defaultPriority": 3,
        }
        created(await api.post("/api/queues", json=limits, headers={"X-Project": project}))
        busy_job = await delayed_job(api, project)
        await wait_for_job(api, busy_job, {"scheduled"}, timeout=30)
        await readable(gateway_url, viewer, project, watched)
        yield Team(project, owner, viewer, watched, busy_job)
        await api.post(f"/api/jobs/{busy_job}/cancel")  # nothing of this module stays waiting


async def project_flow(api: httpx.AsyncClient, project: str) -> dict[str, Any]:
    answer = await api.get(f"/api/project-flow/{project}")
    assert answer.status_code == 200, answer.text
    flow: dict[str, Any] = answer.json()
    return flow


def row(page: Page, name: str) -> Locator:
    return page.locator(f'[data-testid="queue-row"][data-queue-name="{name}"]')


async def no_sideways_scroll(page: Page, name: str) -> None:
    """The page fits the viewport's width (a wide table scrolls inside its own region)."""
    widths = await page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], (name, widths, await widest(page))


async def widest(page: Page) -> list[Any]:
    """What reaches past the viewport's right edge, widest first (a failure's clue)."""
    found: list[Any] = await page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .map((e) => [Math.round(e.getBoundingClientRect().right), e.tagName,
                         e.getAttribute('class'), e.getAttribute('data-testid'),
                         (e.textContent || '').slice(0, 40)])
            .filter((f) => f[0] > document.documentElement.clientWidth)
            .sort((a, b) => b[0] - a[0]).slice(0, 8)"""
    )
    return found


async def test_an_admin_creates_changes_pauses_and_resumes_a_queue(
    page: Page, page_errors: PageErrors, team: Team, gateway_url: str
) -> None:
    page_errors.allow("status of 409")  # the browser logs the delete the API refuses
    name = queue_name("emails")
    await log_in(page, team.owner, PASSWORD)
    await page.goto(f"/jobs?project={team.project}")
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Queues").click()
    await expect(page).to_have_url(re.compile(rf"/queues\?project={team.project}$"))
    await expect(row(page, team.watched)).to_be_visible()
    await expect(page.get_by_test_id("queue-target")).to_contain_text("Creating in Queues")

    form = page.get_by_role("form", name="New queue")
    await form.get_by_label("Name", exact=True).fill(name)
    await form.get_by_label("Max concurrency").fill("2")
    await form.get_by_label("Rate limit").fill("20")
    await form.get_by_role("button", name="Create queue").click()
    created_row = row(page, name)
    await expect(created_row.get_by_test_id("queue-running")).to_have_text("0 / 2")
    await expect(created_row.get_by_test_id("queue-rate")).to_have_text("20/s")
    await expect(created_row.get_by_test_id("queue-key")).to_have_text("—")
    await expect(created_row.get_by_test_id("queue-state")).to_contain_text("active")
    watched = row(page, team.watched)
    await expect(watched.get_by_test_id("queue-running")).to_have_text("0 / 3")
    await expect(watched.get_by_test_id("queue-rate")).to_have_text("600/min")
    await expect(watched.get_by_test_id("queue-key")).to_have_text("customerId ≤ 1")
    await accessible(page, "queues")

    async with signed_in(gateway_url, team.owner, PASSWORD) as api:
        stored = await queue_of(api, team.project, name)
        assert stored is not None, name
        assert (stored["maxConcurrency"], stored["rateLimit"]) == (
            2,
            {"limit": 20, "per": "second"},
        )

        # the limit changed, the rate emptied: sent as null, no rate limit any more
        await created_row.get_by_role("button", name=f"Edit limits of {name}").click()
        edit = page.get_by_role("form", name=f"Edit limits of {name}")
        await expect(edit.get_by_label("Max concurrency")).to_have_value("2")
        await edit.get_by_label("Max concurrency").fill("5")
        await edit.get_by_label("Rate limit").fill("")
        await accessible(page, "queues-edit")
        await edit.get_by_role("button", name="Save limits").click()
        await expect(edit).to_have_count(0)
        await expect(created_row.get_by_test_id("queue-running")).to_have_text("0 / 5")
        await expect(created_row.get_by_test_id("queue-rate")).to_have_text("—")
        stored = await queue_of(api, team.project, name)
        assert stored is not None
        assert (stored["maxConcurrency"], stored["rateLimit"]) == (5, None)

        await created_row.get_by_role("button", name=f"Pause queue {name}").click()
        await expect(created_row).to_have_attribute("data-paused", "true")
        await expect(created_row.get_by_test_id("queue-state")).to_contain_text("paused")
        stored = await queue_of(api, team.project, name)
        assert stored is not None and stored["paused"] is True
        assert stored["pausedBy"] == team.owner

        await created_row.get_by_role("button", name=f"Resume queue {name}").click()
        await expect(created_row).to_have_attribute("data-paused", "false")
        await expect(created_row.get_by_test_id("queue-state")).to_contain_text("active")
        stored = await queue_of(api, team.project, name)
        assert stored is not None and stored["paused"] is False

    # the default queue holds the delayed job: its delete is refused, with the API's reason
    default = row(page, "default")
    await expect(default.get_by_test_id("queue-waiting")).to_have_text("1")
    await default.get_by_test_id("delete-queue-default").click()
    await default.get_by_test_id("delete-queue-default-confirm").click()
    await expect(default.get_by_test_id("queue-error")).to_contain_text("Not deleted")
    await expect(default).to_be_visible()

    # an idle queue goes after the confirmation
    await created_row.get_by_test_id(f"delete-queue-{name}").click()
    await created_row.get_by_test_id(f"delete-queue-{name}-confirm").click()
    await expect(created_row).to_have_count(0)

    # a phone's width: the table scrolls in its own region, the page does not
    await page.set_viewport_size(PHONE)
    await watched.get_by_role("button", name=f"Edit limits of {team.watched}").click()
    await expect(page.get_by_role("form", name=f"Edit limits of {team.watched}")).to_be_visible()
    await page.get_by_role("button", name="Change weight and quotas").click()
    await expect(page.get_by_role("form", name="Change weight and quotas")).to_be_visible()
    await no_sideways_scroll(page, "queues-admin-390")
    await accessible(page, "queues-admin-390")


async def test_an_admin_sets_the_project_weight_and_a_quota(
    page: Page, team: Team, gateway_url: str
) -> None:
    await log_in(page, team.owner, PASSWORD)
    await page.goto(f"/queues?project={team.project}")
    panel = page.get_by_test_id("project-flow")
    await expect(panel.get_by_role("heading", name="Project settings")).to_be_visible()
    async with signed_in(gateway_url, team.owner, PASSWORD) as api:
        before = await project_flow(api, team.project)
        await expect(panel.get_by_test_id("project-weight")).to_have_text(str(before["weight"]))
        # a weight and one quota set, the other quota left as it is (none)
        await panel.get_by_role("button", name="Change weight and quotas").click()
        form = panel.get_by_role("form", name="Change weight and quotas")
        await form.get_by_label("Weight").fill("7")
        await form.get_by_label("Max waiting jobs").fill("5000")
        await accessible(page, "queues-project-flow-edit")
        await form.get_by_role("button", name="Save settings").click()
        await expect(form).to_have_count(0)
        await expect(panel.get_by_test_id("project-weight")).to_have_text("7")
        await expect(panel.get_by_test_id("project-max-waiting")).to_have_text(
            re.compile(r"^5\D?000$")
        )
        await expect(panel.get_by_test_id("project-max-submitted-per-day")).to_have_text("none")
        await expect(panel.get_by_test_id("project-flow-changed")).to_contain_text(
            f"by {team.owner}"
        )
        flow = await project_flow(api, team.project)
        assert (flow["weight"], flow["maxWaiting"], flow["maxSubmittedPerDay"]) == (7, 5000, None)
        assert flow["updatedBy"] == team.owner

        # the quota emptied: sent as null, no quota any more; the weight stays
        await panel.get_by_role("button", name="Change weight and quotas").click()
        await expect(form.get_by_label("Weight")).to_have_value("7")
        await form.get_by_label("Max waiting jobs").fill("")
        await form.get_by_role("button", name="Save settings").click()
        await expect(panel.get_by_test_id("project-max-waiting")).to_have_text("none")
        flow = await project_flow(api, team.project)
        assert (flow["weight"], flow["maxWaiting"], flow["maxSubmittedPerDay"]) == (7, None, None)
    await accessible(page, "queues-project-flow")


async def test_an_admin_reads_the_project_usage(page: Page, team: Team) -> None:
    """The module's delayed job was submitted today: once the usage sweep folded it (every
    2 s), the range's total counts it; the Queues page reads usage again every 15 s."""
    await log_in(page, team.owner, PASSWORD)
    await page.goto(f"/queues?project={team.project}")
    usage = page.get_by_test_id("usage")
    await expect(usage.get_by_role("heading", name="Usage")).to_be_visible()
    await expect(usage.get_by_role("radio", name="Last 30 days")).to_be_checked()
    submitted = usage.get_by_test_id("usage-submitted").get_by_role("definition")
    await expect(submitted).to_have_text(re.compile(r"^[1-9]\d*$"), timeout=40_000)
    await expect(usage.get_by_test_id("usage-run-time").get_by_role("definition")).to_have_text(
        re.compile(r"\d")
    )
    chart = usage.get_by_test_id("usage-chart")
    await expect(chart).to_have_attribute(
        "aria-label", re.compile(r"^Bar chart: [1-9]\d* submitted")
    )

    # the last 7 days: today is among them, as the last row of the table
    await usage.get_by_role("radio", name="Last 7 days").click()
    await expect(usage.get_by_test_id("usage-range")).to_have_attribute("aria-busy", "false")
    await expect(chart).to_have_attribute("aria-label", re.compile(r" in 7 days$"))
    await usage.get_by_text("Show as table").click()
    table = usage.get_by_test_id("usage-table")
    await expect(table.get_by_role("row")).to_have_count(1 + 7)
    today = table.get_by_role("row").last
    await expect(today.get_by_role("cell").first).to_have_text(re.compile(r"^[1-9]\d*$"))
    await accessible(page, "queues-usage")

    await page.set_viewport_size(PHONE)
    await expect(submitted).to_have_text(re.compile(r"^[1-9]\d*$"))
    # the chart takes the new width once its resize observer has fired
    await page.wait_for_function(
        """() => document.querySelector('[data-testid="usage-chart"] svg')
            .getBoundingClientRect().right <= document.documentElement.clientWidth"""
    )
    await no_sideways_scroll(page, "queues-usage-390")
    await accessible(page, "queues-usage-390")


async def test_a_viewer_sees_the_queues_but_no_control_to_change_them(
    page: Page, team: Team
) -> None:
    await log_in(page, team.viewer, PASSWORD)
    await page.goto(f"/queues?project={team.project}")
    watched = row(page, team.watched)
    await expect(watched.get_by_test_id("queue-running")).to_have_text("0 / 3")
    await expect(watched.get_by_test_id("queue-rate")).to_have_text("600/min")
    await expect(watched.get_by_test_id("queue-defaults")).to_contain_text("priority High (3)")
    await expect(page.get_by_test_id("project-role")).to_have_text("Your role: Viewer")
    await expect(watched.get_by_test_id("queue-view-only")).to_contain_text("your role: Viewer")
    rows = page.get_by_test_id("queue-row")
    await expect(rows.get_by_role("button")).to_have_count(0)
    await expect(page.get_by_role("form", name="New queue")).to_have_count(0)
    await expect(page.get_by_test_id("queue-create-denied")).to_contain_text(
        "You are a viewer in Queues"
    )
    # the project's weight and quotas, read-only
    panel = page.get_by_test_id("project-flow")
    await expect(panel.get_by_test_id("project-weight")).to_have_text(re.compile(r"^\d+$"))
    await expect(panel.get_by_test_id("project-flow-denied")).to_contain_text(
        "You are a viewer in Queues: changing the weight and quotas takes the admin role"
    )
    await expect(panel.get_by_role("button")).to_have_count(0)
    await expect(panel.get_by_role("textbox")).to_have_count(0)
    # the project's usage is read by its viewers too
    await expect(page.get_by_test_id("usage-totals")).to_be_visible()
    await accessible(page, "queues-viewer")

    await page.set_viewport_size(PHONE)
    await page.reload()
    await expect(watched.get_by_test_id("queue-running")).to_have_text("0 / 3")
    await no_sideways_scroll(page, "queues-viewer-390")
    await accessible(page, "queues-viewer-390")


async def test_a_viewer_sees_each_queue_s_depth_and_last_hour(
    page: Page, team: Team, gateway_url: str
) -> None:
    """The delayed job (priority 2, ``scheduled``) is the default queue's depth; the scheduler
    samples each minute within 10 s of its start and the page reads the last hour every 15 s,
    so its sparkline counts the job within about 90 s of the job's submission (less, as the
    module's other tests ran first)."""
    await log_in(page, team.viewer, PASSWORD)
    await page.goto(f"/queues?project={team.project}")
    default = row(page, "default")
    depth = default.get_by_role("table", name="Unfinished jobs of default by state and priority")
    await expect(depth.get_by_role("columnheader")).to_have_text(["State", "High", "Medium", "Low"])
    await expect(depth.locator("tbody tr")).to_have_count(1)
    scheduled = depth.locator('tr[data-status="scheduled"]')
    await expect(scheduled.get_by_role("rowheader")).to_have_text("scheduled")
    await expect(scheduled.get_by_role("cell")).to_have_text(["0", "1", "0"])
    watched = row(page, team.watched)
    await expect(watched.get_by_test_id("queue-depth")).to_have_text("nothing unfinished")
    await expect(page.get_by_test_id("queue-history-key")).to_contain_text("waiting (solid line)")

    spark = default.get_by_test_id("queue-last-hour").get_by_role("img")
    await expect(spark).to_have_attribute(
        "aria-label",
        re.compile(
            r"^Last 60 minutes of default: waiting up to [1-9]\d*, 1 at the last sample; "
            r"running up to 0, 0 at the last sample\."
        ),
        timeout=90_000,
    )
    await expect(watched.get_by_test_id("queue-last-hour").get_by_role("img")).to_have_attribute(
        "aria-label", re.compile(r"^Last 60 minutes of .*: waiting up to 0, 0 at the last sample")
    )
    async with signed_in(gateway_url, team.viewer, PASSWORD) as api:
        answer = await api.get("/api/queues/history", headers={"X-Project": team.project})
        assert answer.status_code == 200, answer.text
        items = {item["name"]: item for item in answer.json()["items"]}
        assert len(items["default"]["waiting"]) == 60
        assert 1 in items["default"]["waiting"]
    await accessible(page, "queues-depth")

    await page.set_viewport_size(PHONE)
    await page.reload()
    await expect(spark).to_be_visible()
    await expect(scheduled.get_by_role("cell")).to_have_text(["0", "1", "0"])
    await no_sideways_scroll(page, "queues-depth-390")
    await accessible(page, "queues-depth-390")
