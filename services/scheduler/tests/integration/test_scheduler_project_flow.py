"""A project's weight and quotas in the scheduler's internal API (docs/flow-control.md,
"Project weights" and "Quotas"), on a real job store: a project never given one reads weight
1 and no quota, its admins (and the platform admin) change the fields given, its viewers read
them and cannot change them, a caller outside the project finds nothing, and a weight that is
not an integer from 1 to 100, a quota that is not one from 1 (or null), an empty body or one
with more is a 422 that changes nothing. The quota route answers the quotas with the
project's waiting jobs, counted on the unfinished jobs' index only when it has maxWaiting."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.contracts import utcnow
from jobs_common.jobstore import jobs, project_flow
from jobs_common.tenancy import OrgRole, personal_project_id
from jobs_scheduler.adapters.project_flow import waiting_count

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


def quota_path(project: uuid.UUID) -> str:
    return f"/internal/v1/projects/{project}/quota"


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
        "maxWaiting": None,
        "maxSubmittedPerDay": None,
        "maxRunning": None,
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
        {"maxWaiting": 0},
        {"maxWaiting": "5"},
        {"maxWaiting": 2.5},
        {"maxWaiting": 2**31},
        {"maxSubmittedPerDay": 0},
        {"maxSubmittedPerDay": True},
        {"weight": None, "maxWaiting": 5},
    ],
)
async def test_a_weight_out_of_range_or_not_an_integer_is_a_422_that_changes_nothing(
    api: httpx.AsyncClient, db: AsyncEngine, body: dict[str, Any]
) -> None:
    team = uuid.uuid4()
    admin = team_member(OrgRole.ADMIN, team)
    first = {"weight": 4, "maxWaiting": 7}
    assert (await api.put(path(team), json=first, headers=as_(admin))).status_code == 200
    before = await stored(db, team)
    answer = await api.put(path(team), json=body, headers=as_(admin))
    assert (answer.status_code, answer.json()["error"]) == (422, "validation_error"), answer.text
    assert await stored(db, team) == before
    view = (await api.get(path(team), headers=as_(admin))).json()
    assert (view["weight"], view["maxWaiting"], view["maxSubmittedPerDay"]) == (4, 7, None)


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


async def test_admins_set_quotas_field_by_field_and_clear_one_with_null(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    team = uuid.uuid4()
    viewer, admin = team_member(OrgRole.VIEWER, team), team_member(OrgRole.ADMIN, team)

    # A project's first setting, a quota: the row weighs 1.
    first = await api.put(path(team), json={"maxWaiting": 50}, headers=as_(admin))
    assert first.status_code == 200, first.text
    view = first.json()
    assert (view["weight"], view["maxWaiting"], view["maxSubmittedPerDay"]) == (1, 50, None)
    assert (await stored(db, team)).weight == 1

    both = {"maxWaiting": 20, "maxSubmittedPerDay": 1000}
    changed = (await api.put(path(team), json=both, headers=as_(admin))).json()
    assert (changed["weight"], changed["maxWaiting"], changed["maxSubmittedPerDay"]) == (
        1,
        20,
        1000,
    )
    assert (await api.get(path(team), headers=as_(viewer))).json() == changed

    # The weight alone leaves the quotas; a quota given as null clears that one only.
    weighed = (await api.put(path(team), json={"weight": 9}, headers=as_(ADMIN))).json()
    assert (weighed["weight"], weighed["maxWaiting"], weighed["maxSubmittedPerDay"]) == (
        9,
        20,
        1000,
    )
    assert weighed["updatedBy"] == ADMIN.email
    cleared = (await api.put(path(team), json={"maxWaiting": None}, headers=as_(admin))).json()
    assert (cleared["weight"], cleared["maxWaiting"], cleared["maxSubmittedPerDay"]) == (
        9,
        None,
        1000,
    )
    row = await stored(db, team)
    assert (row.weight, row.max_waiting, row.max_submitted_per_day, row.updated_by) == (
        9,
        None,
        1000,
        admin.email,
    )
    running = (await api.put(path(team), json={"maxRunning": 8}, headers=as_(admin))).json()
    assert (running["weight"], running["maxWaiting"], running["maxRunning"]) == (9, None, 8)
    row = await stored(db, team)
    assert row.max_running == 8
    assert (await api.put(path(team), json={}, headers=as_(admin))).status_code == 422
    assert (
        await api.put(path(team), json={"maxRunning": 0}, headers=as_(admin))
    ).status_code == 422
    assert await stored(db, team) == row


async def add_jobs(db: AsyncEngine, project: uuid.UUID, *statuses: str) -> None:
    rows = [
        {
            "id": uuid.uuid4(),
            "type": "echo",
            "priority": 2,
            "payload": {},
            "submitted_by": "ann@example.com",
            "project_id": project,
            "status": status,
            "max_attempts": 3,
            "attempt_limit": 3,
            "timeout_seconds": 30,
            "lease_expires_at": utcnow() + timedelta(hours=1) if status == "running" else None,
        }
        for status in statuses
    ]
    async with db.begin() as connection:
        await connection.execute(jobs.insert(), rows)


async def test_the_quota_route_counts_the_waiting_jobs_only_under_a_waiting_quota(
    api: httpx.AsyncClient, db: AsyncEngine
) -> None:
    team, other = uuid.uuid4(), uuid.uuid4()
    viewer, admin = team_member(OrgRole.VIEWER, team), team_member(OrgRole.ADMIN, team)
    await add_jobs(db, team, "queued", "queued", "queued", "running", "succeeded")
    await add_jobs(db, other, "queued", "queued")

    unset = await api.get(quota_path(team), headers=as_(viewer))
    assert unset.status_code == 200, unset.text
    assert unset.json() == {
        "projectId": str(team),
        "maxWaiting": None,
        "maxSubmittedPerDay": None,
        "waiting": None,
    }
    # A daily quota alone counts nothing either.
    await api.put(path(team), json={"maxSubmittedPerDay": 100}, headers=as_(admin))
    assert (await api.get(quota_path(team), headers=as_(viewer))).json()["waiting"] is None

    await api.put(path(team), json={"maxWaiting": 5}, headers=as_(admin))
    quota = await api.get(quota_path(team), headers=as_(viewer))
    assert quota.json() == {
        "projectId": str(team),
        "maxWaiting": 5,
        "maxSubmittedPerDay": 100,
        "waiting": 3,
    }
    # The platform admin reads any project's.
    assert (await api.get(quota_path(team), headers=as_(ADMIN))).json()["waiting"] == 3


async def test_the_quota_route_finds_no_project_outside_the_caller_s(
    api: httpx.AsyncClient,
) -> None:
    team = uuid.uuid4()
    admin = team_member(OrgRole.ADMIN, team)
    assert (await api.put(path(team), json={"maxWaiting": 5}, headers=as_(admin))).is_success
    for who in (USER, team_member(OrgRole.OWNER, uuid.uuid4())):
        answer = await api.get(quota_path(team), headers=as_(who))
        assert (answer.status_code, answer.json()["message"]) == (
            404,
            f"project {team} not found",
        )
    own = personal_project_id(USER.email)
    assert (await api.get(quota_path(own), headers=as_(USER))).json()["projectId"] == str(own)
    forged = {k: v for k, v in as_(ADMIN).items() if k != "x-internal-token"}
    assert (await api.get(quota_path(team), headers=forged)).status_code == 401


async def test_the_waiting_count_reads_the_unfinished_jobs_index(db: AsyncEngine) -> None:
    """The count's WHERE matches the partial index's predicate, so the planner can read the
    project's unfinished jobs there, even in a generic plan of the statement as the driver
    sends it (here made to: a table this small is read whole)."""
    statement = waiting_count(uuid.uuid4())
    async with db.begin() as connection:
        compiled = statement.compile(dialect=connection.dialect)
        params = [compiled.params[name] for name in compiled.positiontup or ()]
        driver = (await connection.get_raw_connection()).driver_connection
        assert driver is not None
        await driver.execute("SET LOCAL enable_seqscan = off")
        await driver.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        plan = "\n".join(row[0] for row in await driver.fetch(f"EXPLAIN {compiled}", *params))
    assert "ix_jobs_queue_unfinished" in plan, plan
