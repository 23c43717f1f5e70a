"""The demo data of development (issue 32, point 6): the first system's seed (Acme Corp with
an owner, an admin and a viewer and two projects, Startup Inc with one), seeded once however
often a gateway starts, and the demo logins listed for the login page in development only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from jobs_common.db import create_engine
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.seed import seed_demo_team
from jobs_gateway.adapters.tenancy import TenancyStore
from jobs_gateway.adapters.users import UserRepository

from .test_gateway_tenancy import login, ok, refused

pytestmark = pytest.mark.integration


def names(page: dict[str, Any], *fields: str) -> list[tuple[Any, ...]]:
    return [tuple(item[f] for f in fields) for item in page["items"]]


async def test_a_development_gateway_seeds_the_demo_team_once_and_lists_its_logins(
    gateway_factory: Any, gateway_database_url: str
) -> None:
    async with gateway_factory(environment="development") as gateway:
        alice = await login(gateway, "admin@example.com", "password123")
        orgs = ok(await gateway.get("/api/organizations", headers=alice))
        assert ("Acme Corp", "acme-corp", "owner") in names(orgs, "name", "slug", "role")
        assert ("Startup Inc", "startup-inc", "member") in names(orgs, "name", "slug", "role")
        acme = next(o for o in orgs["items"] if o["slug"] == "acme-corp")
        members = ok(await gateway.get(f"/api/organizations/{acme['id']}/members", headers=alice))
        assert names(members, "email", "role") == [
            ("admin@example.com", "owner"),
            ("dev@example.com", "admin"),
            ("viewer@example.com", "viewer"),
        ]
        carol = await login(gateway, "viewer@example.com", "password123")
        projects = ok(await gateway.get(f"/api/projects?orgId={acme['id']}", headers=carol))
        assert names(projects, "name", "slug") == [
            ("Background Jobs", "background-jobs"),
            ("Web App", "web-app"),
        ]
        accounts = ok(await gateway.get("/auth/demo-accounts"))["accounts"]
        assert [a["email"] for a in accounts] == [
            "admin@test.com",
            "user@test.com",
            "admin@example.com",
            "dev@example.com",
            "viewer@example.com",
        ]
        for account in accounts:  # every one listed logs in with the password shown
            await login(gateway, account["email"], account["password"])

    # Started again (or seeded by another replica): nothing more is made.
    engine = create_engine(gateway_database_url, pool_size=1)
    try:
        created = await seed_demo_team(UserRepository(engine), Passwords(), TenancyStore(engine))
    finally:
        await engine.dispose()
    assert created == 0


async def test_outside_development_there_are_no_demo_accounts(gateway: httpx.AsyncClient) -> None:
    refused(await gateway.get("/auth/demo-accounts"), 404, "not_found")
    answer = await gateway.post(
        "/auth/login", json={"email": "admin@example.com", "password": "password123"}
    )
    assert answer.status_code == 401
