"""Project API keys through the gateway, against real PostgreSQL: shown once and hashed at
rest, listed by prefix, refused at once when revoked (on another gateway replica too) or
expired, last use recorded, and only a project's admins manage them (docs/tenancy.md)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from .test_gateway_tenancy import login, ok, refused, user

pytestmark = pytest.mark.integration


async def project_of(gateway: httpx.AsyncClient, owner: dict[str, str]) -> dict[str, Any]:
    org = ok(
        await gateway.post("/api/organizations", json={"name": "Keys Inc"}, headers=owner), 201
    )
    return ok(
        await gateway.post("/api/projects", json={"orgId": org["id"], "name": "CI"}, headers=owner),
        201,
    ) | {"orgId": org["id"]}


async def test_a_key_is_shown_once_stored_as_a_hash_and_acts_as_its_project(
    gateway: httpx.AsyncClient, gateway_database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    owner = await user(gateway, "keys-owner@example.com")
    project = await project_of(gateway, owner)
    keys = f"/api/projects/{project['id']}/api-keys"
    created = ok(
        await gateway.post(keys, json={"name": "ci", "role": "member"}, headers=owner), 201
    )
    secret = created["key"]
    assert secret.startswith(f"jk_{created['prefix']}_") and len(secret) == 3 + 8 + 1 + 43
    assert (created["role"], created["createdBy"], created["lastUsedAt"]) == (
        "member",
        "keys-owner@example.com",
        None,
    )
    listed = ok(await gateway.get(keys, headers=owner))
    assert [k["prefix"] for k in listed["items"]] == [created["prefix"]]
    assert "key" not in listed["items"][0]

    for headers in ({"Authorization": f"Bearer {secret}"}, {"X-API-Key": secret}):
        me = ok(await gateway.get("/api/api-key", headers=headers))
        assert (me["id"], me["projectId"], me["role"]) == (created["id"], project["id"], "member")
    assert ok(await gateway.get(keys, headers=owner))["items"][0]["lastUsedAt"] is not None

    # Nowhere at rest or in a log line.
    connection = await asyncpg.connect(gateway_database_url)
    try:
        rows = await connection.fetch("SELECT * FROM gateway.api_keys")
    finally:
        await connection.close()
    assert len(rows) == 1 and all(secret not in str(value) for value in rows[0].values())
    assert secret[12:] not in caplog.text

    # A key reads through the dashboard as its project (test_gateway_project_scope.py),
    # whichever header carries it.
    for auth in ({"X-API-Key": secret}, {"Authorization": f"Bearer {secret}"}):
        ok(await gateway.get("/api/jobs", headers=auth))


async def test_wrong_revoked_and_expired_keys_are_refused_at_once_on_every_replica(
    gateway: httpx.AsyncClient, gateway_factory: Any, gateway_database_url: str
) -> None:
    owner = await user(gateway, "revoker@example.com")
    project = await project_of(gateway, owner)
    keys = f"/api/projects/{project['id']}/api-keys"
    created = ok(
        await gateway.post(keys, json={"name": "bot", "role": "viewer"}, headers=owner), 201
    )
    secret = created["key"]
    async with gateway_factory() as other_replica:
        for replica in (gateway, other_replica):
            assert (
                ok(await replica.get("/api/api-key", headers={"X-API-Key": secret}))["role"]
                == "viewer"
            )
        for wrong in (
            secret[:-1] + ("A" if secret[-1] != "A" else "B"),  # right prefix, wrong secret
            "jk_notakey",
            f"jk_{created['prefix']}",
        ):
            refused(
                await gateway.get("/api/api-key", headers={"X-API-Key": wrong}), 401, "unauthorized"
            )
        ok(await gateway.delete(f"{keys}/{created['id']}", headers=owner), 204)
        for replica in (other_replica, gateway):
            refused(
                await replica.get("/api/api-key", headers={"X-API-Key": secret}),
                401,
                "unauthorized",
            )
        revoked = ok(await gateway.get(keys, headers=owner))["items"][0]
        assert revoked["revokedBy"] == "revoker@example.com" and revoked["revokedAt"]

    soon = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    expiring = ok(
        await gateway.post(
            keys, json={"name": "t", "role": "member", "expiresAt": soon}, headers=owner
        ),
        201,
    )
    assert ok(await gateway.get("/api/api-key", headers={"X-API-Key": expiring["key"]}))
    connection = await asyncpg.connect(gateway_database_url)
    try:  # an hour later
        await connection.execute(
            "UPDATE gateway.api_keys SET expires_at = now() - interval '1 second' WHERE id = $1",
            expiring["id"],
        )
    finally:
        await connection.close()
    refused(
        await gateway.get("/api/api-key", headers={"X-API-Key": expiring["key"]}),
        401,
        "unauthorized",
    )
    for body in (
        {"name": "x", "role": "owner"},
        {"name": "x", "role": "member", "expiresAt": "2020-01-01T00:00:00Z"},
        {"name": "x", "role": "member", "expiresAt": "2099-01-01T00:00:00"},
        {"name": "", "role": "viewer"},
    ):
        refused(await gateway.post(keys, json=body, headers=owner), 422, "validation_error")
    refused(await gateway.get("/api/api-key"), 401, "unauthorized")


async def test_only_a_projects_admins_manage_its_keys(gateway: httpx.AsyncClient) -> None:
    owner = await user(gateway, "key-org-owner@example.com")
    project = await project_of(gateway, owner)
    members = f"/api/organizations/{project['orgId']}/members"
    keys = f"/api/projects/{project['id']}/api-keys"
    for email, role in (("key-admin@example.com", "admin"), ("key-member@example.com", "member")):
        await user(gateway, email)
        ok(await gateway.post(members, json={"email": email, "role": role}, headers=owner), 201)
    admin = await login(gateway, "key-admin@example.com", "correct-horse-battery")
    member = await login(gateway, "key-member@example.com", "correct-horse-battery")
    stranger = await user(gateway, "key-stranger@example.com")
    created = ok(await gateway.post(keys, json={"name": "a", "role": "viewer"}, headers=admin), 201)
    refused(
        await gateway.post(keys, json={"name": "b", "role": "viewer"}, headers=member),
        403,
        "forbidden",
    )
    refused(await gateway.get(keys, headers=member), 403, "forbidden")
    refused(await gateway.delete(f"{keys}/{created['id']}", headers=member), 403, "forbidden")
    for call in (
        gateway.get(keys, headers=stranger),
        gateway.post(keys, json={"name": "c", "role": "viewer"}, headers=stranger),
        gateway.delete(f"{keys}/{created['id']}", headers=stranger),
    ):
        refused(await call, 404, "not_found")
    # A key of one project is not found through another project's path.
    other = ok(
        await gateway.post(
            "/api/projects", json={"orgId": project["orgId"], "name": "Other"}, headers=owner
        ),
        201,
    )
    refused(
        await gateway.delete(
            f"/api/projects/{other['id']}/api-keys/{created['id']}", headers=owner
        ),
        404,
        "not_found",
    )
    ok(await gateway.delete(f"{keys}/{created['id']}", headers=admin), 204)
