"""The organization audit log (docs/tenancy.md, "Audit log"): each change of an organization,
its members, projects and keys is one row naming who made it, written with the change (a
refused change writes none); its admins and owners read it, newest first."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .test_gateway_tenancy import ok, refused, user

pytestmark = pytest.mark.integration


async def test_every_change_is_recorded_with_its_actor_and_read_by_admins(
    gateway: httpx.AsyncClient,
) -> None:
    olga = await user(gateway, "olga@audit.example.com")
    adam = await user(gateway, "adam@audit.example.com")
    mia = await user(gateway, "mia@audit.example.com")
    sam = await user(gateway, "sam@audit.example.com")
    org = ok(await gateway.post("/api/organizations", json={"name": "Audit Co"}, headers=olga), 201)
    members = f"/api/organizations/{org['id']}/members"
    for email, role in (("adam@audit.example.com", "admin"), ("mia@audit.example.com", "member")):
        ok(await gateway.post(members, json={"email": email, "role": role}, headers=olga), 201)
    # A refused change (a member already) records nothing.
    again = {"email": "mia@audit.example.com", "role": "viewer"}
    refused(await gateway.post(members, json=again, headers=olga), 409, "conflict")
    web = ok(
        await gateway.post("/api/projects", json={"orgId": org["id"], "name": "Web"}, headers=adam),
        201,
    )
    ok(await gateway.patch(f"/api/projects/{web['id']}", json={"name": "Web App"}, headers=adam))
    keys = f"/api/projects/{web['id']}/api-keys"
    key = ok(await gateway.post(keys, json={"name": "ci", "role": "member"}, headers=adam), 201)
    ok(await gateway.delete(f"{keys}/{key['id']}", headers=adam), 204)
    mia_id = next(
        m["userId"]
        for m in ok(await gateway.get(members, headers=olga))["items"]
        if m["email"] == "mia@audit.example.com"
    )
    ok(await gateway.patch(f"{members}/{mia_id}", json={"role": "viewer"}, headers=olga))
    ok(await gateway.delete(f"{members}/{mia_id}", headers=olga), 204)

    audit = f"/api/organizations/{org['id']}/audit"
    page = ok(await gateway.get(audit, params={"pageSize": 50}, headers=adam))
    rows: list[dict[str, Any]] = page["items"]
    assert [(r["action"], r["actor"], r["subject"]) for r in reversed(rows)] == [
        ("organization.created", "olga@audit.example.com", "audit-co"),
        ("member.added", "olga@audit.example.com", "adam@audit.example.com"),
        ("member.added", "olga@audit.example.com", "mia@audit.example.com"),
        ("project.created", "adam@audit.example.com", "web"),
        ("project.updated", "adam@audit.example.com", "web"),
        ("api_key.created", "adam@audit.example.com", key["prefix"]),
        ("api_key.revoked", "adam@audit.example.com", key["prefix"]),
        ("member.role_changed", "olga@audit.example.com", "mia@audit.example.com"),
        ("member.removed", "olga@audit.example.com", "mia@audit.example.com"),
    ]
    assert page["totalItems"] == 9
    by_action = {r["action"]: r for r in rows}
    assert by_action["project.updated"]["details"] == {"name": "Web App"}
    assert by_action["project.updated"]["projectId"] == web["id"]
    assert by_action["member.role_changed"]["details"] == {"from": "member", "to": "viewer"}
    assert by_action["api_key.created"]["details"] == {"name": "ci", "role": "member"}
    assert key["key"] not in str(rows)  # never the secret
    # Its admins and owners read it; a member may not; another organization's owner 404.
    ok(await gateway.get(audit, headers=olga))
    viewer = {"email": "mia@audit.example.com", "role": "viewer"}
    ok(await gateway.post(members, json=viewer, headers=olga), 201)
    refused(await gateway.get(audit, headers=mia), 403, "forbidden")
    refused(await gateway.get(audit, headers=sam), 404, "not_found")
