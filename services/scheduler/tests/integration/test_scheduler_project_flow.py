"""A project's weight in the scheduler's internal API (docs/flow-control.md, "Project
weights"), on a real job store: a project never given one reads weight 1, its admins (and the
platform admin) set it, its viewers read it and cannot set it, a caller outside the project
finds nothing, and a weight that is not an integer from 1 to 100 (or a body with more) is a
422 that changes nothing."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.jobstore import project_flow
from jobs_common.tenancy import OrgRole, personal_project_id

from .conftest import as_

pytestmark = pytest.mark.integration

USER = Identity(user_id="u-1", email="user@test.com", role="user")
ADMIN = Identity(user_id="u-3", email="admin@test.com", role="admin")


def team_member(role: OrgRole, team: uuid.UUID) -> Identity:
    return Identity(
        user_id=f"u-{role.value}",
        email=f"{role.value}@test.com",
        role="user",
        project_id=str(team),
        project_role=role,
        grants=((str(team), role),),
    )


def path(project: uuid.UUID) -> str:
    return f"/internal/v1/projects/{project}/flow"


async def stored(db: AsyncEngine, project: uuid.UUID) -> Any:
    async with db.connect() as connection:
        return (
            await connection.execute(
                select(project_flow).where(project_flow.c.project_id == project)
            )
        ).first()


async def test_a_team_s_admin_sets_its_weight_and_its_viewer_reads_it(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    team = uuid.uuid4()
    viewer, admin = team_member(OrgRole.VIEWER, team), team_member(OrgRole.ADMIN, team)
    unset = await api.get(path(team), headers=as_(viewer))
    assert unset.status_code == 200, unset.text
    assert unset.json() == {
        "projectId": str(team),
        "weight": 1,
        "updatedBy": None,
        "updatedAt": None,
    }
    assert await stored(db, team) is None

    changed = await api.put(path(team), json={"weight": 5}, headers=as_(admin))
    assert changed.status_code == 200, changed.text
    view = changed.json()
    assert (view["projectId"], view["weight"], view["updatedBy"]) == (str(team), 5, admin.email)
    assert datetime.fromisoformat(view["updatedAt"]).tzinfo is not None
    assert (await api.get(path(team), headers=as_(viewer))).json() == view
    row = await stored(db, team)
    assert (row.weight, row.updated_by) == (5, admin.email)

    # A second PUT changes the one row: the last writer wins.
    again = (await api.put(path(team), json={"weight": 2}, headers=as_(ADMIN))).json()
    assert (again["weight"], again["updatedBy"]) == (2, ADMIN.email)
    assert again["updatedAt"] >= view["updatedAt"]
    async with db.connect() as connection:
        assert await connection.scalar(select(project_flow.c.weight)) == 2


async def test_a_viewer_cannot_set_it_and_an_outsider_finds_no_project(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    team = uuid.uuid4()
    viewer, member = team_member(OrgRole.VIEWER, team), team_member(OrgRole.MEMBER, team)
    for who in (viewer, member):
        refused = await api.put(path(team), json={"weight": 5}, headers=as_(who))
        assert (refused.status_code, refused.json()["error"]) == (404, "not_found"), who
    # A user outside the team (scoped by its own rows: its personal project) sees nothing.
    for call in (
        api.get(path(team), headers=as_(USER)),
        api.put(path(team), json={"weight": 5}, headers=as_(USER)),
    ):
        answer = await call
        assert (answer.status_code, answer.json()["message"]) == (
            404,
            f"project {team} not found",
        )
    assert await stored(db, team) is None
    # ...and its personal project is its own to set.
    own = personal_project_id(USER.email)
    assert (await api.put(path(own), json={"weight": 3}, headers=as_(USER))).json()["weight"] == 3


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
    ],
)
async def test_a_weight_out_of_range_or_not_an_integer_is_a_422_that_changes_nothing(
    api: httpx.AsyncClient, db: AsyncEngine, body: dict[str, Any]
) -> None:
    team = uuid.uuid4()
    admin = team_member(OrgRole.ADMIN, team)
    assert (await api.put(path(team), json={"weight": 4}, headers=as_(admin))).status_code == 200
    before = await stored(db, team)
    answer = await api.put(path(team), json=body, headers=as_(admin))
    assert (answer.status_code, answer.json()["error"]) == (422, "validation_error"), answer.text
    assert await stored(db, team) == before
    assert (await api.get(path(team), headers=as_(admin))).json()["weight"] == 4


async def test_a_project_id_that_is_not_a_uuid_is_a_422(api: httpx.AsyncClient) -> None:
    answer = await api.get("/internal/v1/projects/web-app/flow", headers=as_(ADMIN))
    assert (answer.status_code, answer.json()["error"]) == (422, "validation_error")


async def test_a_call_without_the_internal_token_is_a_401_that_changes_nothing(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    team = uuid.uuid4()
    forged = {k: v for k, v in as_(ADMIN).items() if k != "x-internal-token"}
    for headers in ({}, forged):
        answer = await api.put(path(team), json={"weight": 5}, headers=headers)
        assert (answer.status_code, answer.json()["error"]) == (401, "unauthorized")
    assert await stored(db, team) is None
