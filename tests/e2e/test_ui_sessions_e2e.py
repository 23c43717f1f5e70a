"""Console sessions across tabs (issue 35, point 2) in Debian's Chromium against the real stack:
the refresh token is the gateway's HttpOnly cookie, so a job link opened in a new tab of the
same browser, and a reload, land on the job page, not the login; tabs reloading at once take
turns to refresh (no reuse, the session goes on); a logout in one tab sends every tab to the
login page. Fails on any console error of either tab; each page is checked with axe-core."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
from playwright.async_api import Page, expect

from .conftest import PageErrors
from .test_ui_e2e import QUICK, accessible, log_in, submit_api

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def watched(tab: Page, errors: PageErrors) -> Page:
    tab.on("console", errors.console)
    tab.on("pageerror", errors.uncaught)
    tab.on("response", errors.response)
    tab.set_default_timeout(15_000)
    return tab


async def on_job_page(tab: Page, link: str) -> None:
    await expect(tab.get_by_test_id("job-status")).to_be_visible()
    await expect(tab).to_have_url(re.compile(re.escape(link) + "$"))


async def test_a_new_tab_and_a_reload_keep_the_session_and_a_logout_ends_every_tab(
    page: Page, page_errors: PageErrors, user: httpx.AsyncClient
) -> None:
    job_id = await submit_api(user, QUICK)
    link = f"/jobs/{job_id}"
    await log_in(page)

    other = watched(await page.context.new_page(), page_errors)  # a link typed in a new tab
    await other.goto(link)
    await on_job_page(other, link)
    await accessible(other, "session-new-tab")

    # Both tabs load at the same moment (a reload here, a link there): they take turns with
    # the one cookie.
    await asyncio.gather(page.goto(link), other.reload())
    await asyncio.gather(on_job_page(page, link), on_job_page(other, link))
    await other.reload()  # the session is still alive
    await on_job_page(other, link)

    cookies = [c for c in await page.context.cookies() if c["name"] == "jobs_refresh"]
    assert [(c["httpOnly"], c["sameSite"], c["path"]) for c in cookies] == [
        (True, "Strict", "/auth")
    ]
    assert await other.evaluate("document.cookie") == ""  # no script reads the refresh token
    assert await other.evaluate("sessionStorage.length") == 0

    await page.get_by_role("button", name="Log out").click()
    for tab in (page, other):
        await expect(tab).to_have_url(re.compile(r"/login$"))
        await expect(tab.get_by_role("heading", name="Log in")).to_be_visible()
    assert not [c for c in await page.context.cookies() if c["name"] == "jobs_refresh"]
    await other.goto(link)  # the session is over: a job link asks for a login again
    await expect(other).to_have_url(re.compile(r"/login$"))
