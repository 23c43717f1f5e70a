"""The console follows a project (issue 32, point 7), in Debian's Chromium against the real
stack: the switcher narrows the pages to one project and the URL keeps it (a reload and a new
tab open the same project), a viewer sees a project's job but no control to change it, and the
members, projects and API keys pages each driven once. Every test fails on a console error;
every page it shows is checked with axe-core and saved as a screenshot (var/artifacts/ui/).

One team for the module, made through the API by users registered for it (nothing seeded is
touched): an owner, a viewer and a registered user to invite; an organization with the
projects Alpha and Beta; a job in each, delayed by an hour (recorded as `scheduled`, so a
member could cancel it, and no worker time is spent), cancelled at the end."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, Request, expect

from jobs_testing.gateway_session import signed_in

from .conftest import PageErrors, wait_for_job
from .test_ui_e2e import accessible, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

PASSWORD = "a-long-password"
DELAYED = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}


@dataclass(frozen=True)
class Team:
    org_id: str
    alpha: str
    beta: str
    alpha_job: str
    beta_job: str
    owner: str
    viewer: str
    invitee: str


async def register(http: httpx.AsyncClient, role: str) -> str:
    email = f"ui-{role}-{uuid.uuid4().hex[:8]}@example.com"
    answer = await http.post("/auth/register", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 202, answer.text
    return email


def created(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 201, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def delayed_job(owner: httpx.AsyncClient, project_id: str) -> str:
    body = {"type": "simulate", "priority": 2, "payload": DELAYED, "delaySeconds": 3600}
    answer = await owner.post("/api/jobs", json=body, headers={"X-Project": project_id})
    assert answer.status_code == 202, answer.text
    job_id: str = answer.json()["jobId"]
    return job_id


@pytest.fixture(scope="module")
async def team(gateway_url: str) -> AsyncIterator[Team]:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as http:
        owner, viewer, invitee = [await register(http, r) for r in ("owner", "viewer", "invitee")]
    async with signed_in(gateway_url, owner, PASSWORD) as api:
        org = created(
            await api.post("/api/organizations", json={"name": f"UI {uuid.uuid4().hex[:6]}"})
        )
        alpha = created(await api.post("/api/projects", json={"orgId": org["id"], "name": "Alpha"}))
        beta = created(await api.post("/api/projects", json={"orgId": org["id"], "name": "Beta"}))
        created(
            await api.post(
                f"/api/organizations/{org['id']}/members", json={"email": viewer, "role": "viewer"}
            )
        )
        alpha_job = await delayed_job(api, alpha["id"])
        beta_job = await delayed_job(api, beta["id"])
        for job_id in (alpha_job, beta_job):
            await wait_for_job(api, job_id, {"scheduled"}, timeout=30)
        yield Team(org["id"], alpha["id"], beta["id"], alpha_job, beta_job, owner, viewer, invitee)
        for job_id in (alpha_job, beta_job):  # nothing of this module stays waiting in the stack
            await api.post(f"/api/jobs/{job_id}/cancel")


def rows(page: Page) -> Any:
    return page.get_by_test_id("job-row")


def switcher(page: Page) -> Any:
    return page.get_by_label("Project", exact=True)


def watch(page: Page, page_errors: PageErrors) -> None:
    page.on("console", page_errors.console)
    page.on("pageerror", page_errors.uncaught)
    page.on("response", page_errors.response)


async def test_the_switcher_narrows_the_jobs_to_one_project_and_the_url_keeps_it(
    page: Page, page_errors: PageErrors, team: Team
) -> None:
    sent: list[tuple[str, str | None]] = []  # (path, X-Project) of every API request

    def record(request: Request) -> None:
        path = request.url.split("//", 1)[1].split("/", 1)[1]
        if path.startswith("api/"):
            sent.append((f"/{path}", request.headers.get("x-project")))

    page.on("request", record)
    await log_in(page, team.owner, PASSWORD)
    await page.goto("/jobs")
    await expect(rows(page)).to_have_count(2)  # all projects: both jobs, each with its project
    await expect(rows(page).filter(has_text="Alpha")).to_have_attribute(
        "data-job-id", team.alpha_job
    )
    await expect(switcher(page)).to_have_value("")

    await switcher(page).select_option(label="Alpha")
    await expect(page).to_have_url(re.compile(rf"/jobs\?project={team.alpha}$"))
    await expect(rows(page)).to_have_count(1)
    await expect(rows(page)).to_have_attribute("data-job-id", team.alpha_job)
    await expect(page.get_by_test_id("project-role")).to_have_text("Your role: Owner")
    # the live socket follows the project too (?projectId=, accepted by the gateway)
    await expect(page.get_by_test_id("live-status")).to_have_attribute("data-live-status", "live")
    await accessible(page, "tenancy-jobs-one-project")
    lists = [header for path, header in sent if path.startswith("/api/jobs?")]
    assert lists[-1] == team.alpha, sent
    tenancy = [(p, h) for p, h in sent if re.match(r"/api/(organizations|projects)\b", p)]
    assert tenancy and all(h is None for _, h in tenancy), tenancy

    # every link keeps it: the nav, a job and back
    nav = page.get_by_role("navigation", name="Main")
    await nav.get_by_role("link", name="Dead letters").click()
    await expect(page).to_have_url(re.compile(rf"/dead-letters\?project={team.alpha}$"))
    await nav.get_by_role("link", name="Jobs").click()
    await rows(page).get_by_role("link", name=f"Job {team.alpha_job}").click()
    await expect(page).to_have_url(re.compile(rf"/jobs/{team.alpha_job}\?project={team.alpha}$"))
    await expect(page.get_by_test_id("job-project")).to_contain_text("Alpha")
    await page.get_by_role("link", name="← Jobs").click()
    await expect(rows(page)).to_have_count(1)

    # a reload opens the same project
    await page.reload()
    await expect(switcher(page)).to_have_value(team.alpha)
    await expect(rows(page)).to_have_attribute("data-job-id", team.alpha_job)

    # and so does the link in a new tab (the browser's session: straight to the link)
    tab = await page.context.new_page()
    watch(tab, page_errors)
    await tab.goto(f"/jobs?project={team.beta}")
    await expect(tab).to_have_url(re.compile(rf"/jobs\?project={team.beta}$"))
    await expect(switcher(tab)).to_have_value(team.beta)
    await expect(rows(tab)).to_have_count(1)
    await expect(rows(tab)).to_have_attribute("data-job-id", team.beta_job)


async def test_a_viewer_sees_the_project_s_job_but_no_control_to_change_it(
    page: Page, team: Team, gateway_url: str
) -> None:
    await log_in(page, team.viewer, PASSWORD)
    await page.goto(f"/jobs/{team.alpha_job}?project={team.alpha}")
    await expect(page.get_by_test_id("job-status")).to_have_attribute("data-status", "scheduled")
    await expect(page.get_by_test_id("project-role")).to_have_text("Your role: Viewer")
    await expect(page.get_by_test_id("job-actions-denied")).to_contain_text(
        "You are a viewer in Alpha"
    )
    await expect(page.get_by_role("button", name="Cancel job")).to_have_count(0)
    await expect(page.get_by_role("button", name="Retry job")).to_have_count(0)
    await accessible(page, "tenancy-viewer-job")

    # all projects: the job's own project still decides
    await page.goto(f"/jobs/{team.alpha_job}")
    await expect(page.get_by_test_id("job-actions-denied")).to_be_visible()
    await expect(page.get_by_role("button", name="Cancel job")).to_have_count(0)

    await page.goto(f"/jobs?project={team.alpha}")
    await expect(rows(page)).to_have_attribute("data-job-id", team.alpha_job)
    await expect(page.get_by_test_id("bulk-actions-denied")).to_be_visible()
    await expect(page.get_by_role("checkbox", name=re.compile("^Select"))).to_have_count(0)
    await expect(page.get_by_role("link", name="Submit a job")).to_have_count(0)

    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Submit").click()
    await expect(page.get_by_test_id("submit-target")).to_contain_text("Submitting to Alpha")
    await expect(page.get_by_test_id("submit-denied")).to_be_visible()
    await expect(page.get_by_role("button", name="Submit job")).to_have_count(0)
    await accessible(page, "tenancy-viewer-submit")

    # the API refuses it as well, in the documented error format
    async with signed_in(gateway_url, team.viewer, PASSWORD) as api:
        refused = await api.post(f"/api/jobs/{team.alpha_job}/cancel")
        assert refused.status_code == 403, refused.text
        assert set(refused.json()) >= {"error", "message", "details"}
        submitted = await api.post(
            "/api/jobs",
            json={"type": "simulate", "priority": 2, "payload": DELAYED},
            headers={"X-Project": team.alpha},
        )
        assert submitted.status_code == 403, submitted.text


async def test_members_are_added_by_email_given_another_role_and_removed(
    page: Page, team: Team, gateway_url: str
) -> None:
    await log_in(page, team.owner, PASSWORD)
    await page.goto(f"/organizations/{team.org_id}")
    form = page.get_by_role("form", name="Add a member")
    await form.get_by_label("Email", exact=True).fill(team.invitee)
    await form.get_by_label("Role", exact=True).select_option("member")
    await form.get_by_role("button", name="Add member").click()
    row = page.locator(f'[data-testid="member-row"][data-email="{team.invitee}"]')
    await expect(row).to_be_visible()
    await accessible(page, "tenancy-members")

    await row.get_by_label(f"Role of {team.invitee}").select_option("admin")
    await expect(page.get_by_test_id("notices")).to_contain_text(f"{team.invitee} is now admin")
    async with signed_in(gateway_url, team.owner, PASSWORD) as api:
        members = (await api.get(f"/api/organizations/{team.org_id}/members")).json()["items"]
        assert {m["email"]: m["role"] for m in members}[team.invitee] == "admin"

    await row.get_by_test_id(f"remove-member-{team.invitee}").click()
    await row.get_by_test_id(f"remove-member-{team.invitee}-confirm").click()
    await expect(row).to_have_count(0)
    async with signed_in(gateway_url, team.owner, PASSWORD) as api:
        members = (await api.get(f"/api/organizations/{team.org_id}/members")).json()["items"]
        assert team.invitee not in {m["email"] for m in members}


async def test_projects_are_created_renamed_and_deleted(
    page: Page, team: Team, gateway_url: str
) -> None:
    await log_in(page, team.owner, PASSWORD)
    await page.goto(f"/organizations/{team.org_id}")
    form = page.get_by_role("form", name="Create a project")
    await form.get_by_label("Project name").fill("Gamma")
    await form.get_by_role("button", name="Create project").click()
    row = page.locator('[data-testid="project-row"][data-project-name="Gamma"]')
    await expect(row).to_be_visible()
    # the switcher lists it at once
    await expect(switcher(page).locator("option", has_text="Gamma")).to_have_count(1)
    await accessible(page, "tenancy-projects")

    await row.get_by_role("button", name="Rename project Gamma").click()
    await row.get_by_label("New name of Gamma").fill("Gamma two")
    await row.get_by_role("button", name="Save").click()
    renamed = page.locator('[data-testid="project-row"][data-project-name="Gamma two"]')
    await expect(renamed).to_be_visible()

    await renamed.get_by_test_id("delete-project-Gamma two").click()
    await renamed.get_by_test_id("delete-project-Gamma two-confirm").click()
    await expect(renamed).to_have_count(0)
    await expect(switcher(page).locator("option", has_text="Gamma")).to_have_count(0)
    async with signed_in(gateway_url, team.owner, PASSWORD) as api:
        listed = (await api.get("/api/projects", params={"orgId": team.org_id})).json()["items"]
        assert sorted(p["name"] for p in listed) == ["Alpha", "Beta"]


async def test_an_api_key_is_shown_once_with_a_warning_copied_and_revoked(
    page: Page, team: Team, gateway_url: str
) -> None:
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=gateway_url)
    await log_in(page, team.owner, PASSWORD)
    await page.goto(f"/projects/{team.alpha}/api-keys?project={team.alpha}")
    form = page.get_by_role("form", name="Create an API key")
    await form.get_by_label("Name", exact=True).fill("ci")
    await form.get_by_role("button", name="Create API key").click()
    shown = page.get_by_test_id("created-key")
    await expect(page.get_by_test_id("created-key-warning")).to_contain_text(
        "will not be shown again"
    )
    key = await shown.get_by_label("New API key").input_value()
    assert key.startswith("jk_"), key
    await shown.get_by_role("button", name="Copy").click()
    await expect(page.get_by_test_id("notices")).to_contain_text("API key copied")
    assert await page.evaluate("navigator.clipboard.readText()") == key
    await accessible(page, "tenancy-api-key-shown")

    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as http:
        calling = await http.get("/api/api-key", headers={"X-API-Key": key})
        assert calling.status_code == 200, calling.text
        assert calling.json()["projectId"] == team.alpha

        await shown.get_by_role("button", name="I have stored it").click()
        await expect(shown).to_have_count(0)
        assert key not in await page.content()  # shown once: gone from the page
        row = page.locator('[data-testid="key-row"][data-key-name="ci"]')
        await expect(row).to_have_attribute("data-state", "active")
        await row.get_by_test_id("revoke-key-ci").click()
        await row.get_by_test_id("revoke-key-ci-confirm").click()
        await expect(row).to_have_attribute("data-state", "revoked")
        refused = await http.get("/api/api-key", headers={"X-API-Key": key})
        assert refused.status_code == 401, refused.text


async def test_a_link_to_a_project_the_user_does_not_see_says_so_and_leads_back(
    page: Page, page_errors: PageErrors, team: Team
) -> None:
    page_errors.allow("status of 404")  # the browser logs the project lookup the API refuses
    await log_in(page, team.viewer, PASSWORD)
    await page.goto(f"/jobs?project={team.beta}&status=scheduled")  # the viewer sees Beta too
    await expect(rows(page)).to_have_attribute("data-job-id", team.beta_job)
    await page.goto(f"/jobs?project={uuid.uuid4()}&status=scheduled")
    await expect(page.get_by_test_id("project-not-found")).to_contain_text("is visible to you")
    await expect(page.get_by_test_id("jobs-table")).to_have_count(0)
    await accessible(page, "tenancy-project-not-found")
    await page.get_by_role("link", name="Show all projects").click()
    await expect(page).to_have_url(re.compile(r"/jobs\?status=scheduled$"))
    await expect(rows(page)).to_have_count(2)
