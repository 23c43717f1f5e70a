"""Schedules per user are capped (all of them, and those of email jobs), counted in the creating
transaction; a schedule of email jobs sends only to allowed recipients."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import schedules
from jobs_dashboard.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.registry]  # payload checks

SIMULATE = {"type": "simulate", "priority": 1, "payload": {}}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "max_schedules_per_user": 3,
            "max_email_schedules_per_user": 1,
            "email_allowed_recipients": ["example.com", "boss@example.org"],
        }
    )


def email_to(address: str) -> dict[str, Any]:
    return {"type": "email", "priority": 3, "payload": {"to": address, "subject": "s", "body": "b"}}


async def create(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    name: str,
    template: dict[str, Any],
    cron: str = "0 7 * * *",
) -> httpx.Response:
    body = {"name": name, "cron": cron, "timezone": "UTC", "jobTemplate": template}
    return await client.post("/api/schedules", json=body, headers=headers)


async def owned(engine: AsyncEngine, owner: str) -> int:
    async with engine.connect() as connection:
        count = await connection.scalar(
            select(func.count()).select_from(schedules).where(schedules.c.owner == owner)
        )
    return int(count or 0)


def refused_for_quota(response: httpx.Response, what: str) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert body["error"] == "too_many_requests"
    assert what in body["message"]


async def test_schedules_and_email_schedules_per_user_are_capped(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    assert (await create(client, auth.user, "mail", email_to("a@example.com"))).status_code == 201
    refused_for_quota(
        await create(client, auth.user, "mail-2", email_to("b@example.com")),
        "email schedule quota",
    )
    for name in ("one", "two"):
        assert (await create(client, auth.user, name, SIMULATE)).status_code == 201
    refused_for_quota(await create(client, auth.user, "four", SIMULATE), "schedule quota")
    assert await owned(store_engine, auth.user_email) == 3
    # Per owner: another user has a quota of their own; admins are exempt.
    assert (await create(client, auth.other, "mail", email_to("a@example.com"))).status_code == 201
    for index in range(5):
        created = await create(client, auth.admin, f"admin-{index}", email_to("a@example.com"))
        assert created.status_code == 201
    # Deleting one frees a slot.
    listed = (await client.get("/api/schedules", headers=auth.user)).json()["items"]
    one = next(item for item in listed if item["name"] == "one")
    assert (
        await client.delete(f"/api/schedules/{one['id']}", headers=auth.user)
    ).status_code == 204
    assert (await create(client, auth.user, "four", SIMULATE)).status_code == 201


async def test_concurrent_creates_never_pass_the_cap(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    responses = await asyncio.gather(
        *(create(client, auth.user, f"s-{index}", SIMULATE) for index in range(8))
    )
    assert sorted(response.status_code for response in responses) == [201] * 3 + [429] * 5
    assert await owned(store_engine, auth.user_email) == 3


async def test_email_schedules_only_to_allowed_recipients(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    refused = await create(client, auth.user, "mail", email_to("someone@elsewhere.net"))
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == "validation_error"
    assert [d["field"] for d in refused.json()["details"]] == ["jobTemplate.payload.to"]
    assert await owned(store_engine, auth.user_email) == 0
    allowed = await create(client, auth.user, "mail", email_to("BOSS@example.org"))
    assert allowed.status_code == 201, allowed.text


@pytest.mark.parametrize("cron", ["* * * * *", "*/5 * * * *", "0,10 9 * * *", "* 9 1 * *"])
async def test_email_schedules_fire_at_most_once_per_interval(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine, cron: str
) -> None:
    """Every fire sends a mail the email quota does not see: an email schedule firing more
    often than DASHBOARD_MIN_EMAIL_SCHEDULE_INTERVAL_SECONDS (900 s) is refused."""
    refused = await create(client, auth.user, "mail", email_to("a@example.com"), cron)
    assert refused.status_code == 422, refused.text
    (detail,) = refused.json()["details"]
    assert detail["field"] == "cron" and "at most once every 900 s" in detail["message"]
    assert await owned(store_engine, auth.user_email) == 0
    # Other job types may fire every minute; an email every 15 minutes is allowed; admins
    # are exempt like the caps.
    assert (await create(client, auth.user, "tick", SIMULATE, cron)).status_code == 201
    quarter = await create(client, auth.user, "mail", email_to("a@example.com"), "*/15 * * * *")
    assert quarter.status_code == 201, quarter.text
    admin = await create(client, auth.admin, "mail", email_to("a@example.com"), cron)
    assert admin.status_code == 201, admin.text
