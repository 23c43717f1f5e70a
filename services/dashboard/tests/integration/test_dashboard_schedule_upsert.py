"""``PUT /api/schedules/by-name/{name}``: a deploy script's create-or-update, checked like a
create (422 changes nothing) and taking a project admin (a viewer or member: 403), decided by
the scheduler's real internal API on this test's job store."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.jobstore import schedules
from jobs_common.tenancy import OrgRole

from .conftest import INTERNAL_TOKEN

pytestmark = [pytest.mark.integration, pytest.mark.registry]  # payload checks

TEAM = uuid.uuid4()


def scoped(email: str, role: OrgRole) -> dict[str, str]:
    identity = Identity(
        user_id=f"u-{email}",
        email=email,
        role="user",
        project_id=str(TEAM),
        project_role=role,
        grants=((str(TEAM), role),),
    )
    return identity.headers(INTERNAL_TOKEN)


ADMIN = scoped("olga@acme.test", OrgRole.ADMIN)
MEMBER = scoped("alice@acme.test", OrgRole.MEMBER)
VIEWER = scoped("bob@acme.test", OrgRole.VIEWER)
PATH = "/api/schedules/by-name/nightly-report"


def body(**overrides: Any) -> dict[str, Any]:
    return {
        "cron": "0 7 * * *",
        "timezone": "America/New_York",
        "jobTemplate": {
            "type": "email",
            "priority": 3,
            "payload": {"to": "a@example.com", "subject": "report", "body": "daily"},
        },
        **overrides,
    }


async def stored(engine: AsyncEngine) -> list[Any]:
    async with engine.connect() as connection:
        return list((await connection.execute(select(schedules))).all())


async def test_put_by_name_creates_then_updates_in_place(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    created = await client.put(PATH, json=body(), headers=ADMIN)
    assert created.status_code == 201, created.text
    first = created.json()
    assert (first["name"], first["projectId"], first["owner"]) == (
        "nightly-report",
        str(TEAM),
        "olga@acme.test",
    )
    assert (first["declaredIn"], first["declaredAt"]) == (None, None)

    updated = await client.put(PATH, json=body(cron="30 6 * * 1-5"), headers=ADMIN)
    assert updated.status_code == 200, updated.text
    view = updated.json()
    assert (view["id"], view["cron"]) == (first["id"], "30 6 * * 1-5")
    assert view["nextFireAt"] != first["nextFireAt"]
    again = await client.put(PATH, json=body(cron="30 6 * * 1-5"), headers=ADMIN)
    assert (again.status_code, again.json()) == (200, view)
    assert [row.cron for row in await stored(store_engine)] == ["30 6 * * 1-5"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"timezone": "Mars/Base"}, "timezone"),
        (
            {"jobTemplate": {"type": "email", "priority": 2, "payload": {}}},
            "jobTemplate.payload.to",
        ),
        ({"name": "in-the-body"}, "name"),
    ],
)
async def test_a_bad_request_is_422_and_changes_nothing(
    client: httpx.AsyncClient, store_engine: AsyncEngine, overrides: dict[str, Any], field: str
) -> None:
    assert (await client.put(PATH, json=body(), headers=ADMIN)).status_code == 201
    before = await stored(store_engine)
    answer = await client.put(PATH, json=body(**overrides), headers=ADMIN)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "validation_error"
    assert any(field in d["field"] for d in answer.json()["details"]), answer.json()
    assert await stored(store_engine) == before


async def test_a_viewer_or_member_is_refused(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    for headers in (VIEWER, MEMBER):
        refused = await client.put(PATH, json=body(), headers=headers)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"] == "forbidden"
    assert await stored(store_engine) == []
