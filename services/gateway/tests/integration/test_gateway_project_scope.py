"""The project scope the gateway forwards with every proxied /api request (docs/tenancy.md),
against real PostgreSQL and recording upstreams: which project a request acts in, the
caller's role there and the projects it reads; a project named by id, slug or
``<org>/<slug>``; another organization's project not found; API keys acting as their project
only; a client's own scope headers never reaching a backend."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from jobs_common.auth import (
    API_KEY_HEADER,
    PROJECT_GRANTS_HEADER,
    PROJECT_ID_HEADER,
    PROJECT_ROLE_HEADER,
    parse_grants,
)
from jobs_common.tenancy import personal_project_id

from .test_gateway_tenancy import ok, refused, user

pytestmark = pytest.mark.integration


async def team(gateway: httpx.AsyncClient) -> dict[str, Any]:
    """Acme (owner Olga, viewer Vic) with the projects web and ops; Bea's own org with a web."""
    olga = await user(gateway, "olga@acme.example.com")
    vic = await user(gateway, "vic@acme.example.com")
    bea = await user(gateway, "bea@other.example.com")
    acme = ok(await gateway.post("/api/organizations", json={"name": "Acme"}, headers=olga), 201)
    ok(
        await gateway.post(
            f"/api/organizations/{acme['id']}/members",
            json={"email": "vic@acme.example.com", "role": "viewer"},
            headers=olga,
        ),
        201,
    )
    projects = {
        name: ok(
            await gateway.post(
                "/api/projects", json={"orgId": acme["id"], "name": name}, headers=olga
            ),
            201,
        )
        for name in ("web", "ops")
    }
    other = ok(await gateway.post("/api/organizations", json={"name": "Beta"}, headers=bea), 201)
    foreign = ok(
        await gateway.post(
            "/api/projects", json={"orgId": other["id"], "name": "web"}, headers=bea
        ),
        201,
    )
    return {"olga": olga, "vic": vic, "bea": bea, "acme": acme, "foreign": foreign} | projects


def forwarded(upstreams: Any, upstream: str = "submission") -> dict[str, Any]:
    call = getattr(upstreams, upstream).calls()[-1]
    grants = call.header(PROJECT_GRANTS_HEADER)
    return {
        "project": call.header(PROJECT_ID_HEADER),
        "role": call.header(PROJECT_ROLE_HEADER),
        "grants": None if grants is None else dict(parse_grants(grants)),
        "key": call.header(API_KEY_HEADER),
        "raw": call.header("x-project"),
    }


async def test_a_request_acts_in_the_project_it_names_or_the_callers_default(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    t = await team(gateway)
    web, ops, acme = t["web"], t["ops"], t["acme"]
    job = {"type": "email"}

    ok(await gateway.post("/api/jobs", json=job, headers=t["olga"]))
    seen = forwarded(upstreams)
    personal = str(personal_project_id("olga@acme.example.com"))
    assert (seen["project"], seen["role"], seen["key"]) == (personal, "owner", None)
    assert seen["grants"] == {personal: "owner", web["id"]: "owner", ops["id"]: "owner"}

    for named in (web["id"], "acme/web", f"{acme['slug']}/web"):
        if named == "acme/web" and acme["slug"] != "acme":
            continue
        ok(await gateway.post("/api/jobs", json=job, headers=t["olga"] | {"X-Project": named}))
        seen = forwarded(upstreams)
        assert (seen["project"], seen["role"], seen["raw"]) == (web["id"], "owner", None)
        assert seen["grants"] == {web["id"]: "owner"}  # a named project narrows the reads
    for named in (ops["id"], "ops", f"{acme['slug']}/ops"):
        ok(await gateway.get(f"/api/jobs?projectId={named}&pageSize=5", headers=t["vic"]))
        seen = forwarded(upstreams, "dashboard")
        assert (seen["project"], seen["role"], seen["grants"]) == (
            ops["id"],
            "viewer",
            {ops["id"]: "viewer"},
        )
        # The backend reads the id the gateway resolved, whatever the client named.
        assert upstreams.dashboard.calls()[-1].query == f"projectId={ops['id']}&pageSize=5"

    # Another organization's project is not found, whether named by id or by slug.
    for named in (t["foreign"]["id"], "beta/web", f"{t['foreign']['id'][:8]}"):
        refused(
            await gateway.post("/api/jobs", json=job, headers=t["olga"] | {"X-Project": named}),
            404,
            "not_found",
        )
    # Olga's "web" is unique to her; Bea's web and Olga's web never mix.
    ok(await gateway.post("/api/jobs", json=job, headers=t["olga"] | {"X-Project": "web"}))
    assert forwarded(upstreams)["project"] == web["id"]
    refused(
        await gateway.post(
            f"/api/jobs?projectId={ops['id']}", json=job, headers=t["olga"] | {"X-Project": "web"}
        ),
        400,
        "bad_request",
    )
    calls = len(upstreams.submission.calls())
    refused(
        await gateway.post("/api/jobs", json=job, headers=t["olga"] | {"X-Project": " "}),
        400,
        "bad_request",
    )
    assert len(upstreams.submission.calls()) == calls  # refused before any backend


async def test_an_ambiguous_slug_asks_for_the_organization(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    t = await team(gateway)
    # Olga joins Bea's organization: two of her projects are called "web" now.
    beta = t["foreign"]["orgId"]
    ok(
        await gateway.post(
            f"/api/organizations/{beta}/members",
            json={"email": "olga@acme.example.com", "role": "member"},
            headers=t["bea"],
        ),
        201,
    )
    refused(
        await gateway.get("/api/jobs", headers=t["olga"] | {"X-Project": "web"}),
        400,
        "bad_request",
    )


async def test_an_api_key_acts_in_its_project_with_its_role_only(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    t = await team(gateway)
    web = t["web"]
    created = ok(
        await gateway.post(
            f"/api/projects/{web['id']}/api-keys",
            json={"name": "ci", "role": "member"},
            headers=t["olga"],
        ),
        201,
    )
    for auth in ({"X-API-Key": created["key"]}, {"Authorization": f"Bearer {created['key']}"}):
        ok(await gateway.post("/api/jobs", json={"type": "email"}, headers=auth))
        seen = forwarded(upstreams)
        assert seen == {
            "project": web["id"],
            "role": "member",
            "grants": {web["id"]: "member"},
            "key": created["prefix"],
            "raw": None,
        }
        assert upstreams.submission.calls()[-1].header("x-user-email") == "olga@acme.example.com"
    key = {"X-API-Key": created["key"]}
    ok(await gateway.post("/api/jobs", json={}, headers=key | {"X-Project": web["id"]}))
    for other in (t["ops"]["id"], t["foreign"]["id"], "web"):
        refused(
            await gateway.post("/api/jobs", json={}, headers=key | {"X-Project": other}),
            404,
            "not_found",
        )
    # The dashboard's reads take the key, scoped to its project.
    ok(await gateway.get("/api/jobs", headers=key))
    assert forwarded(upstreams, "dashboard")["grants"] == {web["id"]: "member"}
    # Nor manage organizations, projects or keys.
    refused(await gateway.get("/api/organizations", headers=key), 403, "forbidden")


async def test_a_clients_own_scope_headers_never_reach_a_backend(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    t = await team(gateway)
    spoofed = {
        PROJECT_ID_HEADER: t["foreign"]["id"],
        PROJECT_ROLE_HEADER: "owner",
        PROJECT_GRANTS_HEADER: f"{t['foreign']['id']}=owner",
        API_KEY_HEADER: "jk_spoofed",
    }
    ok(await gateway.post("/api/jobs", json={}, headers=t["vic"] | spoofed))
    seen = forwarded(upstreams)
    vic_personal = str(personal_project_id("vic@acme.example.com"))
    assert (seen["project"], seen["role"], seen["key"]) == (vic_personal, "owner", None)
    assert t["foreign"]["id"] not in seen["grants"]
    assert seen["grants"][t["web"]["id"]] == "viewer"


async def test_a_membership_change_reaches_the_scope_within_the_cache_time(
    gateway_factory: Any, upstreams: Any
) -> None:
    async with gateway_factory(
        submission_url=upstreams.submission.url,
        dashboard_url=upstreams.dashboard.url,
        project_grants_cache_seconds=0,
    ) as gateway:
        t = await team(gateway)
        vic_id = ok(await gateway.get("/auth/me", headers=t["vic"]))["id"]
        ok(
            await gateway.delete(
                f"/api/organizations/{t['acme']['id']}/members/{vic_id}", headers=t["olga"]
            ),
            204,
        )
        refused(
            await gateway.get("/api/jobs", headers=t["vic"] | {"X-Project": t["web"]["id"]}),
            404,
            "not_found",
        )
