"""Organizations, members and projects through the gateway's API, against real PostgreSQL:
who may see and do what (docs/tenancy.md), and the personal organization every user gets."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from jobs_common.tenancy import personal_organization_id, personal_project_id

from ..conftest import TEST_INTERNAL_TOKEN

pytestmark = pytest.mark.integration

PASSWORD = "correct-horse-battery"


async def user(gateway: httpx.AsyncClient, email: str) -> dict[str, str]:
    """Register ``email`` and log in: its Authorization header."""
    registered = await gateway.post("/auth/register", json={"email": email, "password": PASSWORD})
    assert registered.status_code == 202, registered.text
    return await login(gateway, email, PASSWORD)


async def login(gateway: httpx.AsyncClient, email: str, password: str) -> dict[str, str]:
    response = await gateway.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code and body["message"] and isinstance(body["details"], list)


async def test_a_registered_user_owns_a_personal_organization_with_a_default_project(
    gateway: httpx.AsyncClient,
) -> None:
    alice = await user(gateway, "Alice@Example.com")
    page = ok(await gateway.get("/api/organizations", headers=alice))
    assert page["totalItems"] == 1 and page["totalPages"] == 1
    [org] = page["items"]
    assert org["id"] == str(personal_organization_id("alice@example.com"))
    assert (org["name"], org["personal"], org["role"]) == ("alice@example.com", True, "owner")
    assert org["slug"].startswith("alice-")
    projects = ok(await gateway.get("/api/projects", headers=alice))["items"]
    assert [(p["id"], p["slug"], p["personalDefault"], p["orgId"]) for p in projects] == [
        (str(personal_project_id("alice@example.com")), "default", True, org["id"])
    ]
    refused(
        await gateway.delete(f"/api/projects/{projects[0]['id']}", headers=alice), 409, "conflict"
    )


async def test_roles_decide_what_a_member_may_do_and_strangers_see_nothing(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    owner = await user(gateway, "owner@acme.example.com")
    admin = await user(gateway, "admin@acme.example.com")
    member = await user(gateway, "member@acme.example.com")
    viewer = await user(gateway, "viewer@acme.example.com")
    stranger = await user(gateway, "someone@startup.example.com")
    org = ok(
        await gateway.post("/api/organizations", json={"name": "Acme Corp"}, headers=owner), 201
    )
    assert (org["slug"], org["role"], org["personal"]) == ("acme-corp", "owner", False)
    refused(
        await gateway.post("/api/organizations", json={"name": "Acme Corp"}, headers=stranger),
        409,
        "conflict",
    )
    members = f"/api/organizations/{org['id']}/members"
    for email, role in (
        ("admin@acme.example.com", "admin"),
        ("member@acme.example.com", "member"),
        ("viewer@acme.example.com", "viewer"),
    ):
        added = ok(
            await gateway.post(members, json={"email": email, "role": role}, headers=owner), 201
        )
        assert (added["email"], added["role"]) == (email, role)
    refused(
        await gateway.post(
            members, json={"email": "viewer@acme.example.com", "role": "admin"}, headers=owner
        ),
        409,
        "conflict",
    )
    refused(
        await gateway.post(
            members, json={"email": "nobody@acme.example.com", "role": "viewer"}, headers=owner
        ),
        404,
        "not_found",
    )

    # Projects: an admin creates, renames and deletes; a member and a viewer read.
    web = ok(
        await gateway.post(
            "/api/projects", json={"orgId": org["id"], "name": "Web App"}, headers=admin
        ),
        201,
    )
    assert (web["slug"], web["createdBy"], web["personalDefault"]) == (
        "web-app",
        "admin@acme.example.com",
        False,
    )
    for who in (member, viewer):
        refused(
            await gateway.post(
                "/api/projects", json={"orgId": org["id"], "name": "X"}, headers=who
            ),
            403,
            "forbidden",
        )
        refused(
            await gateway.patch(f"/api/projects/{web['id']}", json={"name": "Y"}, headers=who),
            403,
            "forbidden",
        )
        assert ok(await gateway.get(f"/api/projects/{web['id']}", headers=who))["name"] == "Web App"
        listed = ok(await gateway.get(f"/api/projects?orgId={org['id']}", headers=who))
        assert [p["id"] for p in listed["items"]] == [web["id"]]
        assert ok(await gateway.get(members, headers=who))["totalItems"] == 4
        refused(
            await gateway.post(
                members,
                json={"email": "someone@startup.example.com", "role": "viewer"},
                headers=who,
            ),
            403,
            "forbidden",
        )
    renamed = ok(
        await gateway.patch(f"/api/projects/{web['id']}", json={"name": "Website"}, headers=admin)
    )
    assert (renamed["name"], renamed["slug"]) == ("Website", "web-app")
    # The organization itself and its members are the owner's.
    refused(
        await gateway.patch(
            f"/api/organizations/{org['id']}", json={"name": "Acme"}, headers=admin
        ),
        403,
        "forbidden",
    )
    assert (
        ok(
            await gateway.patch(
                f"/api/organizations/{org['id']}", json={"name": "Acme"}, headers=owner
            )
        )["name"]
        == "Acme"
    )

    # A stranger: every id of the organization answers 404, and no listing shows it.
    for path in (
        f"/api/organizations/{org['id']}",
        members,
        f"/api/projects/{web['id']}",
        f"/api/projects?orgId={org['id']}",
    ):
        refused(await gateway.get(path, headers=stranger), 404, "not_found")
    refused(await gateway.delete(f"/api/projects/{web['id']}", headers=stranger), 404, "not_found")
    refused(
        await gateway.post(
            "/api/projects", json={"orgId": org["id"], "name": "Z"}, headers=stranger
        ),
        404,
        "not_found",
    )
    assert [
        o["personal"]
        for o in ok(await gateway.get("/api/organizations", headers=stranger))["items"]
    ] == [True]
    assert all(
        p["orgId"] != org["id"]
        for p in ok(await gateway.get("/api/projects", headers=stranger))["items"]
    )

    # Deleted once it has no unfinished job: gone for everyone.
    upstreams.dashboard.answers["/api/jobs"] = (200, {"totalItems": 0})
    ok(await gateway.delete(f"/api/projects/{web['id']}", headers=admin), 204)
    refused(await gateway.get(f"/api/projects/{web['id']}", headers=admin), 404, "not_found")


async def test_a_project_with_unfinished_jobs_is_not_deleted(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    """The gateway counts the project's jobs not in a terminal status (the dashboard, as the
    platform admin reads): any, and the project stays (409); none, and it goes; no count,
    and it stays (503)."""
    owner = await user(gateway, "deleter@acme.example.com")
    org = ok(await gateway.post("/api/organizations", json={"name": "Del"}, headers=owner), 201)
    project = ok(
        await gateway.post("/api/projects", json={"orgId": org["id"], "name": "P"}, headers=owner),
        201,
    )
    path = f"/api/projects/{project['id']}"
    upstreams.dashboard.answers["/api/jobs"] = (200, {"totalItems": 2})
    answer = await gateway.delete(path, headers=owner)
    refused(answer, 409, "conflict")
    assert "2 unfinished jobs" in answer.json()["message"]
    asked = upstreams.dashboard.calls()[-1]
    assert asked.raw_path == "/api/jobs"
    assert asked.query == (
        f"projectId={project['id']}&status=pending,blocked,scheduled,queued,running,failed"
        "&pageSize=1"
    )
    assert (asked.header("x-user-role"), asked.header("x-internal-token")) == (
        "admin",
        TEST_INTERNAL_TOKEN,
    )
    upstreams.dashboard.answers["/api/jobs"] = (503, {"error": "service_unavailable"})
    refused(await gateway.delete(path, headers=owner), 503, "service_unavailable")
    ok(await gateway.get(path, headers=owner))
    upstreams.dashboard.answers["/api/jobs"] = (200, {"totalItems": 0})
    ok(await gateway.delete(path, headers=owner), 204)
    refused(await gateway.get(path, headers=owner), 404, "not_found")


async def test_an_organization_keeps_an_owner_and_a_member_may_leave(
    gateway: httpx.AsyncClient,
) -> None:
    first = await user(gateway, "first@org.example.com")
    second = await user(gateway, "second@org.example.com")
    org = ok(
        await gateway.post(
            "/api/organizations", json={"name": "Org", "slug": "org-1"}, headers=first
        ),
        201,
    )
    members = f"/api/organizations/{org['id']}/members"
    me = ok(await gateway.get("/auth/me", headers=first))["id"]
    refused(
        await gateway.patch(f"{members}/{me}", json={"role": "admin"}, headers=first),
        409,
        "conflict",
    )
    refused(await gateway.delete(f"{members}/{me}", headers=first), 409, "conflict")
    added = ok(
        await gateway.post(
            members, json={"email": "second@org.example.com", "role": "member"}, headers=first
        ),
        201,
    )
    # A member may leave, not remove anyone else.
    refused(await gateway.delete(f"{members}/{me}", headers=second), 403, "forbidden")
    ok(await gateway.delete(f"{members}/{added['userId']}", headers=second), 204)
    refused(await gateway.get(f"/api/organizations/{org['id']}", headers=second), 404, "not_found")
    # Two owners: either may step down, not the last one.
    ok(
        await gateway.post(
            members, json={"email": "second@org.example.com", "role": "owner"}, headers=first
        ),
        201,
    )
    assert (
        ok(await gateway.patch(f"{members}/{me}", json={"role": "viewer"}, headers=first))["role"]
        == "viewer"
    )
    refused(await gateway.delete(f"{members}/{added['userId']}", headers=second), 409, "conflict")
    refused(
        await gateway.patch(f"{members}/{uuid.uuid4()}", json={"role": "viewer"}, headers=second),
        404,
        "not_found",
    )


async def test_the_platform_admin_sees_and_manages_every_organization(
    gateway: httpx.AsyncClient,
) -> None:
    owner = await user(gateway, "lead@team.example.com")
    org = ok(await gateway.post("/api/organizations", json={"name": "Team"}, headers=owner), 201)
    admin = await login(gateway, "admin@test.com", "admin123")
    seen = ok(await gateway.get(f"/api/organizations/{org['id']}", headers=admin))
    assert seen["role"] is None
    listed = ok(await gateway.get("/api/organizations?pageSize=100", headers=admin))
    assert org["id"] in {o["id"] for o in listed["items"]}
    project = ok(
        await gateway.post(
            "/api/projects", json={"orgId": org["id"], "name": "Ops"}, headers=admin
        ),
        201,
    )
    assert project["createdBy"] == "admin@test.com"


async def test_lists_are_paged_and_bad_input_changes_nothing(gateway: httpx.AsyncClient) -> None:
    owner = await user(gateway, "pager@org.example.com")
    org = ok(await gateway.post("/api/organizations", json={"name": "Paged"}, headers=owner), 201)
    for name in ("A", "B", "C"):
        ok(
            await gateway.post(
                "/api/projects", json={"orgId": org["id"], "name": name}, headers=owner
            ),
            201,
        )
    page = ok(
        await gateway.get(f"/api/projects?orgId={org['id']}&pageSize=2&pageNumber=2", headers=owner)
    )
    assert (page["totalItems"], page["totalPages"], [p["name"] for p in page["items"]]) == (
        3,
        2,
        ["C"],
    )
    for body in (
        {"name": ""},
        {"name": "   "},
        {"name": "X", "slug": "Not A Slug"},
        {"name": "X", "slug": "-x"},
        {"name": "x" * 101},
    ):
        refused(
            await gateway.post("/api/organizations", json=body, headers=owner),
            422,
            "validation_error",
        )
    refused(
        await gateway.post("/api/projects", json={"orgId": org["id"], "name": "A"}, headers=owner),
        409,
        "conflict",
    )
    refused(await gateway.get("/api/projects?pageSize=0", headers=owner), 422, "validation_error")
    refused(await gateway.get("/api/organizations"), 401, "unauthorized")
    assert (
        ok(await gateway.get(f"/api/projects?orgId={org['id']}", headers=owner))["totalItems"] == 3
    )
