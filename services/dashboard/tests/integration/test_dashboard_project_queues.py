"""A project's queues through the dashboard's public routes (docs/flow-control.md), with the
scheduler's real internal API behind: list and read within the caller's projects with the
jobs waiting and running now, create, change, pause, resume and delete by the project's
admins (403 below, 404 outside), in the documented error format."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from jobs_common.auth import Identity
from jobs_common.tenancy import OrgRole, personal_project_id

from .conftest import USER, JobFactory, headers

pytestmark = pytest.mark.integration

TEAM = uuid.uuid4()


def member(role: OrgRole, *, named: bool = True) -> dict[str, str]:
    """A member of TEAM with ``role`` (``named``: the request names TEAM, as X-Project)."""
    return headers(
        Identity(
            user_id=f"u-{role.value}",
            email=f"{role.value}@team.test",
            role="user",
            project_id=str(TEAM) if named else None,
            project_role=role if named else None,
            grants=((str(TEAM), role),),
        )
    )


async def create(client: httpx.AsyncClient, who: dict[str, str], **body: Any) -> httpx.Response:
    return await client.post("/api/queues", json=body, headers=who)


async def test_admins_create_change_pause_resume_and_delete_their_project_s_queues(
    client: httpx.AsyncClient, job_factory: JobFactory
) -> None:
    viewer, admin = member(OrgRole.VIEWER), member(OrgRole.ADMIN)
    refused = await create(client, viewer, name="emails", maxConcurrency=2)
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")

    created = await create(client, admin, name="emails", maxConcurrency=2)
    assert created.status_code == 201, created.text
    queue = created.json()
    assert set(queue) == {
        "id",
        "projectId",
        "name",
        "maxConcurrency",
        "rateLimit",
        "concurrencyKey",
        "paused",
        "pausedAt",
        "pausedBy",
        "defaultPriority",
        "defaultTimeoutSeconds",
        "defaultRetryPolicy",
        "createdBy",
        "createdAt",
        "updatedAt",
        "waiting",
        "running",
        "depth",
        "oldestQueuedAt",
        "oldestAgeSeconds",
    }
    assert (queue["projectId"], queue["maxConcurrency"]) == (str(TEAM), 2)
    path = f"/api/queues/{queue['id']}"

    for status in ("queued", "queued", "running", "succeeded"):
        await job_factory.job(project_id=TEAM, queue="emails", status=status)
    read = (await client.get(path, headers=viewer)).json()
    assert (read["waiting"], read["running"]) == (1 + 1, 1)

    assert (await client.patch(path, json={"maxConcurrency": 5}, headers=viewer)).status_code == 403
    changed = await client.patch(
        path,
        json={"maxConcurrency": None, "rateLimit": {"limit": 600, "per": "minute"}},
        headers=admin,
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["maxConcurrency"], changed.json()["rateLimit"]) == (
        None,
        {"limit": 600, "per": "minute"},
    )
    bad = await client.patch(path, json={"maxConcurrency": 0}, headers=admin)
    assert (bad.status_code, bad.json()["error"]) == (422, "validation_error")

    assert (await client.post(f"{path}/pause", headers=viewer)).status_code == 403
    assert (await client.post(f"{path}/pause", headers=admin)).json()["paused"] is True
    assert (await client.post(f"{path}/resume", headers=admin)).json()["paused"] is False

    busy = await client.delete(path, headers=admin)
    assert (busy.status_code, busy.json()["error"]) == (409, "conflict")


async def test_a_caller_sees_and_changes_only_its_projects_queues(
    client: httpx.AsyncClient, auth: Any
) -> None:
    admin = member(OrgRole.ADMIN)
    team_queue = (await create(client, admin, name="reports")).json()
    own = await create(client, auth.user, name="reports")
    assert own.json()["projectId"] == str(personal_project_id(USER.email))

    listed = (await client.get("/api/queues", headers=auth.user)).json()
    assert [(q["name"], q["projectId"]) for q in listed["items"]] == [
        ("reports", str(personal_project_id(USER.email)))
    ]
    assert listed["totalItems"] == 1
    path = f"/api/queues/{team_queue['id']}"
    assert (await client.get(path, headers=auth.user)).status_code == 404
    assert (await client.post(f"{path}/pause", headers=auth.user)).status_code == 404
    assert (await client.delete(path, headers=auth.user)).status_code == 404

    everyone = (await client.get("/api/queues", headers=auth.admin)).json()
    assert everyone["totalItems"] == 2
    by_name = await client.get(
        "/api/queues", params={"name": "reports", "projectId": str(TEAM)}, headers=auth.admin
    )
    assert [q["id"] for q in by_name.json()["items"]] == [team_queue["id"]]
    assert (await client.delete(path, headers=admin)).status_code == 204
    assert (await client.get(path, headers=admin)).status_code == 404


async def test_bad_input_is_a_422_and_a_taken_name_a_409(client: httpx.AsyncClient) -> None:
    admin = member(OrgRole.ADMIN)
    for body in (
        {"name": "Emails"},
        {"name": "emails", "rateLimit": {"limit": 5, "per": "hour"}},
        {"name": "emails", "concurrencyKey": {"field": "customer id", "limit": 1}},
        {"name": "emails", "defaultPriority": 4},
        {"name": "emails", "surprise": 1},
        {"name": "emails", "defaultRetryPolicy": "nope"},
    ):
        answer = await create(client, admin, **body)
        assert (answer.status_code, answer.json()["error"]) == (422, "validation_error"), body
    assert (await create(client, admin, name="emails")).status_code == 201
    taken = await create(client, admin, name="emails")
    assert (taken.status_code, taken.json()["error"]) == (409, "conflict")
    assert (await client.get("/api/queues", headers=admin)).json()["totalItems"] == 1
