"""The scheduler's internal API for the schedules it owns (``/internal/v1/schedules``), the
real app over HTTP on a real job store: the dashboard's create, pause, resume and delete,
decided here with the answers the dashboard passes on (409, 429, 404), and nothing without
the internal token."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from jobs_common.auth import Identity
from jobs_common.tenancy import OrgRole, personal_project_id

from .conftest import as_

pytestmark = pytest.mark.integration

USER = Identity(user_id="u-1", email="user@test.com", role="user")
OTHER = Identity(user_id="u-2", email="other@test.com", role="user")
ADMIN = Identity(user_id="u-3", email="admin@test.com", role="admin")
PATH = "/internal/v1/schedules"


def new_schedule(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "cron": "0 3 * * *",
        "timezone": "Europe/Berlin",
        "jobTemplate": {"type": "simulate", "payload": {}, "priority": 2},
        **fields,
    }


async def test_create_pause_resume_delete_by_owner_and_admin_only(api: httpx.AsyncClient) -> None:
    created = await api.post(PATH, json=new_schedule("nightly"), headers=as_(USER))
    assert created.status_code == 201, created.text
    view = created.json()
    assert (view["owner"], view["paused"], view["timezone"]) == (USER.email, False, "Europe/Berlin")
    assert view["nextFireAt"] is not None
    schedule = f"{PATH}/{view['id']}"

    again = await api.post(PATH, json=new_schedule("nightly"), headers=as_(USER))
    assert again.status_code == 409
    assert again.json()["details"] == [
        {"field": "name", "message": "already used by a schedule of this project"}
    ]
    # The name is the project's: another user's (personal) project may use it.
    assert (
        await api.post(PATH, json=new_schedule("nightly"), headers=as_(OTHER))
    ).status_code == 201

    assert (await api.post(f"{schedule}/pause", headers=as_(OTHER))).status_code == 404
    paused = await api.post(f"{schedule}/pause", headers=as_(ADMIN))
    assert paused.status_code == 200
    assert (paused.json()["paused"], paused.json()["nextFireAt"]) == (True, None)
    resumed = await api.post(f"{schedule}/resume", headers=as_(USER))
    assert (resumed.json()["paused"], resumed.json()["nextFireAt"] is not None) == (False, True)

    assert (await api.delete(schedule, headers=as_(OTHER))).status_code == 404
    assert (await api.delete(schedule, headers=as_(USER))).status_code == 204
    gone = await api.delete(schedule, headers=as_(USER))
    assert gone.status_code == 404
    assert gone.json()["error"] == "not_found"


async def test_caps_are_counted_per_owner_in_the_creating_transaction(
    api: httpx.AsyncClient,
) -> None:
    caps = {"caps": {"maxSchedules": 2, "maxEmailSchedules": 1}}
    email = {"type": "email", "payload": {"to": "a@example.com", "subject": "s", "body": "b"}}
    first = await api.post(
        PATH, json=new_schedule("mail", jobTemplate=email, **caps), headers=as_(USER)
    )
    assert first.status_code == 201, first.text
    second_mail = await api.post(
        PATH, json=new_schedule("mail-2", jobTemplate=email, **caps), headers=as_(USER)
    )
    assert second_mail.status_code == 429
    assert "email schedule quota" in second_mail.json()["message"]
    assert (
        await api.post(PATH, json=new_schedule("b", **caps), headers=as_(USER))
    ).status_code == 201
    third = await api.post(PATH, json=new_schedule("c", **caps), headers=as_(USER))
    assert (third.status_code, third.json()["error"]) == (429, "too_many_requests")
    # Without caps (the dashboard exempts the caller), and for another owner, no cap applies.
    assert (await api.post(PATH, json=new_schedule("c"), headers=as_(USER))).status_code == 201
    assert (
        await api.post(PATH, json=new_schedule("c", **caps), headers=as_(OTHER))
    ).status_code == 201


async def test_nothing_without_the_internal_token(api: httpx.AsyncClient) -> None:
    identity_only = {k: v for k, v in as_(USER).items() if k.lower() != "x-internal-token"}
    refused = await api.post(PATH, json=new_schedule("x"), headers=identity_only)
    assert (refused.status_code, refused.json()["error"]) == (401, "unauthorized")
    wrong = {**as_(USER), "x-internal-token": "not-the-token-0123456789abcdef0123"}
    assert (await api.post(PATH, json=new_schedule("x"), headers=wrong)).status_code == 401
    # Nothing was created: the name is free.
    assert (await api.post(PATH, json=new_schedule("x"), headers=as_(USER))).status_code == 201


POLICIES = "/internal/v1/retry-policies"
POLICY = {
    "name": "gentle",
    "strategy": "exponential",
    "baseDelayMs": 500,
    "multiplier": 2,
    "maxDelayMs": 10_000,
    "jitter": False,
    "maxAttempts": 4,
}


async def test_a_named_retry_policy_is_stored_once_per_project(api: httpx.AsyncClient) -> None:
    """In the request's project, by one of its admins; the platform admin naming no project
    stores a shared one (``projectId`` null); a name is unique within its project."""
    team = uuid.uuid4()
    viewer = Identity(
        user_id="u-4",
        email="vic@test.com",
        role="user",
        project_id=str(team),
        project_role=OrgRole.VIEWER,
        grants=((str(team), OrgRole.VIEWER),),
    )
    lead = viewer.model_copy(
        update={"project_role": OrgRole.ADMIN, "grants": ((str(team), OrgRole.ADMIN),)}
    )
    refused = await api.post(POLICIES, json=POLICY, headers=as_(viewer))
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        "a viewer may not manage retry policies in this project",
    )
    shared = await api.post(POLICIES, json=POLICY, headers=as_(ADMIN))
    assert shared.status_code == 201, shared.text
    assert shared.json() | {"createdAt": None} == POLICY | {
        "createdBy": ADMIN.email,
        "createdAt": None,
        "projectId": None,
    }
    again = await api.post(POLICIES, json=POLICY | {"baseDelayMs": 1}, headers=as_(ADMIN))
    assert (again.status_code, again.json()["error"]) == (409, "conflict")
    in_team = await api.post(POLICIES, json=POLICY, headers=as_(lead))
    assert (in_team.status_code, in_team.json()["projectId"]) == (201, str(team))
    assert (await api.post(POLICIES, json=POLICY, headers=as_(lead))).status_code == 409
    personal = await api.post(POLICIES, json=POLICY, headers=as_(USER))
    assert personal.json()["projectId"] == str(personal_project_id(USER.email))
    bad = await api.post(POLICIES, json=POLICY | {"maxDelayMs": 1}, headers=as_(ADMIN))
    assert bad.status_code == 422
