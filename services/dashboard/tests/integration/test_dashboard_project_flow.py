"""A project's weight and quotas through the dashboard's public routes (docs/flow-control.md,
"Project weights" and "Quotas"), with the scheduler's real internal API behind: read by the
project's viewers (weight 1 and no quota when never set), changed field by field by its admins
(403 below, 404 outside the caller's projects), a bad body refused in the documented error
format with nothing changed."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.jobstore import project_flow
from jobs_common.tenancy import OrgRole

from .conftest import ADMIN, headers

pytestmark = pytest.mark.integration


def member(role: OrgRole, team: uuid.UUID) -> dict[str, str]:
    return headers(
        Identity(
            user_id=f"u-{role.value}",
            email=f"{role.value}@team.test",
            role="user",
            grants=((str(team), role),),
        )
    )


def path(project: uuid.UUID | str) -> str:
    return f"/api/project-flow/{project}"


async def stored(engine: AsyncEngine, project: uuid.UUID) -> Any:
    async with engine.connect() as connection:
        return (
            await connection.execute(
                select(project_flow).where(project_flow.c.project_id == project)
            )
        ).first()


def refused(answer: httpx.Response) -> tuple[int, str]:
    body = answer.json()
    assert {"error", "message", "details"} <= set(body), body
    return answer.status_code, body["error"]


async def test_viewers_read_the_weight_and_admins_set_it(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    team = uuid.uuid4()
    viewer, admin = member(OrgRole.VIEWER, team), member(OrgRole.ADMIN, team)
    unset = await client.get(path(team), headers=viewer)
    assert unset.status_code == 200, unset.text
    assert unset.json() == {
        "projectId": str(team),
        "weight": 1,
        "maxWaiting": None,
        "maxSubmittedPerDay": None,
        "maxRunning": None,
        "updatedBy": None,
        "updatedAt": None,
    }

    changed = await client.put(path(team), json={"weight": 5}, headers=admin)
    assert changed.status_code == 200, changed.text
    view = changed.json()
    assert (view["projectId"], view["weight"], view["updatedBy"]) == (
        str(team),
        5,
        "admin@team.test",
    )
    assert view["updatedAt"] is not None
    assert (await client.get(path(team), headers=viewer)).json() == view
    assert (await stored(store_engine, team)).weight == 5

    # The platform admin sets any project's.
    again = await client.put(path(team), json={"weight": 100}, headers=headers(ADMIN))
    assert (again.json()["weight"], again.json()["updatedBy"]) == (100, ADMIN.email)


async def test_admins_change_the_fields_given_and_clear_a_quota_with_null(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    team = uuid.uuid4()
    viewer, admin = member(OrgRole.VIEWER, team), member(OrgRole.ADMIN, team)

    both = {"maxWaiting": 200, "maxSubmittedPerDay": 5000}
    first = await client.put(path(team), json=both, headers=admin)
    assert first.status_code == 200, first.text
    view = first.json()
    assert (view["weight"], view["maxWaiting"], view["maxSubmittedPerDay"]) == (1, 200, 5000)
    assert (await client.get(path(team), headers=viewer)).json() == view

    weighed = (await client.put(path(team), json={"weight": 3}, headers=admin)).json()
    assert (weighed["weight"], weighed["maxWaiting"], weighed["maxSubmittedPerDay"]) == (
        3,
        200,
        5000,
    )
    cleared = await client.put(path(team), json={"maxSubmittedPerDay": None}, headers=admin)
    assert cleared.status_code == 200, cleared.text
    view = cleared.json()
    assert (view["weight"], view["maxWaiting"], view["maxSubmittedPerDay"]) == (3, 200, None)
    assert (await client.get(path(team), headers=viewer)).json() == view
    row = await stored(store_engine, team)
    assert (row.weight, row.max_waiting, row.max_submitted_per_day) == (3, 200, None)

    # Below admin a quota is refused as the weight is.
    answer = await client.put(path(team), json={"maxWaiting": 1}, headers=viewer)
    assert refused(answer) == (403, "forbidden")
    assert await stored(store_engine, team) == row


async def test_below_admin_is_a_403_and_outside_the_caller_s_projects_a_404(
    client: httpx.AsyncClient, store_engine: AsyncEngine, auth: Any
) -> None:
    team = uuid.uuid4()
    for role in (OrgRole.VIEWER, OrgRole.MEMBER):
        answer = await client.put(path(team), json={"weight": 5}, headers=member(role, team))
        assert refused(answer) == (403, "forbidden"), role
    for answer in (
        await client.get(path(team), headers=auth.user),
        await client.put(path(team), json={"weight": 5}, headers=auth.user),
        await client.put(
            path(team), json={"weight": 5}, headers=member(OrgRole.OWNER, uuid.uuid4())
        ),
    ):
        assert refused(answer) == (404, "not_found")
        assert answer.json()["message"] == "project not found"
    assert await stored(store_engine, team) is None


@pytest.mark.parametrize(
    "body",
    [
        {"weight": 0},
        {"weight": 101},
        {"weight": "3"},
        {"weight": 2.5},
        {"weight": True},
        {"weight": None},
        {},
        {"weight": 3, "surprise": 1},
        [3],
        {"maxWaiting": 0},
        {"maxWaiting": "5"},
        {"maxWaiting": 2**31},
        {"maxSubmittedPerDay": -1},
        {"maxSubmittedPerDay": 1.5},
        {"weight": None, "maxSubmittedPerDay": 5},
    ],
)
async def test_a_bad_body_is_a_422_that_changes_nothing(
    client: httpx.AsyncClient, store_engine: AsyncEngine, body: Any
) -> None:
    team = uuid.uuid4()
    admin = member(OrgRole.ADMIN, team)
    first = {"weight": 4, "maxSubmittedPerDay": 30}
    assert (await client.put(path(team), json=first, headers=admin)).status_code == 200
    before = await stored(store_engine, team)
    answer = await client.put(path(team), json=body, headers=admin)
    assert refused(answer) == (422, "validation_error"), answer.text
    assert answer.json()["details"], answer.text
    assert await stored(store_engine, team) == before
    view = (await client.get(path(team), headers=admin)).json()
    assert (view["weight"], view["maxWaiting"], view["maxSubmittedPerDay"]) == (4, None, 30)


async def test_a_project_named_by_anything_but_its_id_is_a_422(client: httpx.AsyncClient) -> None:
    answer = await client.get(path("web-app"), headers=headers(ADMIN))
    assert refused(answer) == (422, "validation_error")
