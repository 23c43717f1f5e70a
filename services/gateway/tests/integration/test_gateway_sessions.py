"""Sessions against real PostgreSQL: refresh tokens rotate, a reused one ends its family,
logout ends it too, the user row decides at each refresh, and two concurrent uses of one token
never both succeed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import jwt
import pytest

from jobs_testing.waiting import eventually

from ..conftest import TEST_KEYS, GatewayFactory

pytestmark = pytest.mark.integration


@pytest.fixture
async def database(gateway_database_url: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(gateway_database_url)
    yield connection
    await connection.close()


async def login(client: httpx.AsyncClient, email: str, password: str) -> dict[str, Any]:
    response = await client.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def refresh(client: httpx.AsyncClient, token: str) -> httpx.Response:
    return await client.post("/auth/refresh", json={"refreshToken": token})


async def logout(client: httpx.AsyncClient, token: str) -> httpx.Response:
    return await client.post("/auth/logout", json={"refreshToken": token})


def jti(token: str) -> str:
    claims = jwt.decode(
        token,
        TEST_KEYS.secret,
        algorithms=["HS256"],
        audience=TEST_KEYS.audience,
        issuer=TEST_KEYS.issuer,
    )
    return str(claims["jti"])


def assert_401(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.json() == {"error": "unauthorized", "message": "invalid token", "details": []}


async def family(database: asyncpg.Connection, token: str) -> list[asyncpg.Record]:
    return list(
        await database.fetch(
            "SELECT id::text, used_at, replaced_by::text, revoked_at FROM gateway.refresh_tokens "
            "WHERE family_id = (SELECT family_id FROM gateway.refresh_tokens WHERE id = $1) "
            "ORDER BY issued_at, used_at NULLS LAST",
            jti(token),
        )
    )


async def test_a_refresh_token_is_used_once_and_replaced_in_its_family(
    gateway: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    first = await login(gateway, "user@test.com", "user123")
    second = (await refresh(gateway, first["refreshToken"])).json()
    third = (await refresh(gateway, second["refreshToken"])).json()
    assert len({first["refreshToken"], second["refreshToken"], third["refreshToken"]}) == 3
    rows = await family(database, first["refreshToken"])
    assert [(r["id"], r["replaced_by"]) for r in rows] == [
        (jti(first["refreshToken"]), jti(second["refreshToken"])),
        (jti(second["refreshToken"]), jti(third["refreshToken"])),
        (jti(third["refreshToken"]), None),
    ]
    assert [r["used_at"] is not None for r in rows] == [True, True, False]
    assert all(r["revoked_at"] is None for r in rows)
    me = await gateway.get("/auth/me", headers={"Authorization": f"Bearer {third['token']}"})
    assert me.json()["email"] == "user@test.com"


async def test_reusing_a_used_refresh_token_revokes_its_whole_family_only(
    gateway: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    stolen = await login(gateway, "user@test.com", "user123")
    other_session = await login(gateway, "user@test.com", "user123")
    rotated = (await refresh(gateway, stolen["refreshToken"])).json()
    assert_401(await refresh(gateway, stolen["refreshToken"]))  # the replay
    assert_401(await refresh(gateway, rotated["refreshToken"]))  # the family is over
    rows = await family(database, stolen["refreshToken"])
    assert len(rows) == 2
    assert all(r["revoked_at"] is not None for r in rows)
    # the user's other session (another family) goes on
    assert (await refresh(gateway, other_session["refreshToken"])).status_code == 200


async def test_logout_revokes_the_family_and_is_idempotent(
    gateway: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    session = await login(gateway, "user@test.com", "user123")
    current = (await refresh(gateway, session["refreshToken"])).json()
    for token in (current["refreshToken"], current["refreshToken"], session["refreshToken"]):
        response = await logout(gateway, token)
        assert (response.status_code, response.content) == (204, b"")
    assert_401(await refresh(gateway, current["refreshToken"]))
    assert all(r["revoked_at"] is not None for r in await family(database, session["refreshToken"]))
    # a used token of a session logs that session out too
    other = await login(gateway, "admin@test.com", "admin123")
    next_pair = (await refresh(gateway, other["refreshToken"])).json()
    assert (await logout(gateway, other["refreshToken"])).status_code == 204
    assert_401(await refresh(gateway, next_pair["refreshToken"]))


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"refreshToken": "a.b.c"}, 401, "unauthorized"),
        ({"refreshToken": ""}, 422, "validation_error"),
        ({}, 422, "validation_error"),
    ],
)
async def test_logout_refuses_what_is_not_a_refresh_token(
    gateway: httpx.AsyncClient, body: dict[str, str], status: int, code: str
) -> None:
    response = await gateway.post("/auth/logout", json=body)
    assert response.status_code == status, response.text
    assert response.json()["error"] == code


async def test_logout_with_an_access_token_is_401(gateway: httpx.AsyncClient) -> None:
    session = await login(gateway, "user@test.com", "user123")
    response = await logout(gateway, session["token"])
    assert response.status_code == 401
    assert (await refresh(gateway, session["refreshToken"])).status_code == 200


async def test_a_role_change_takes_effect_at_the_next_refresh(
    gateway: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    session = await login(gateway, "user@test.com", "user123")
    await database.execute("UPDATE gateway.users SET role = 'admin' WHERE email = 'user@test.com'")
    refreshed = (await refresh(gateway, session["refreshToken"])).json()
    assert refreshed["user"]["role"] == "admin"
    me = await gateway.get("/auth/me", headers={"Authorization": f"Bearer {refreshed['token']}"})
    assert me.json()["role"] == "admin"


async def test_a_deleted_users_refresh_is_401_and_their_tokens_are_gone(
    gateway: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    session = await login(gateway, "user@test.com", "user123")
    await database.execute("DELETE FROM gateway.users WHERE email = 'user@test.com'")
    assert_401(await refresh(gateway, session["refreshToken"]))
    left = await database.fetchval(
        "SELECT count(*) FROM gateway.refresh_tokens WHERE id = $1", jti(session["refreshToken"])
    )
    assert left == 0


async def test_two_concurrent_refreshes_with_one_token_never_both_succeed(
    gateway_factory: GatewayFactory, gateway_database_url: str, database: asyncpg.Connection
) -> None:
    async with gateway_factory() as client:
        session = await login(client, "user@test.com", "user123")
        token = session["refreshToken"]
        # Hold the token's row so both refreshes are in flight, waiting, at the same time.
        blocker = await asyncpg.connect(gateway_database_url)
        try:
            holding = blocker.transaction()
            await holding.start()
            await blocker.execute(
                "SELECT 1 FROM gateway.refresh_tokens WHERE id = $1 FOR UPDATE", jti(token)
            )
            both = [asyncio.create_task(refresh(client, token)) for _ in range(2)]

            async def both_waiting() -> bool:
                waiting = await database.fetchval(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
                return bool(waiting == 2)

            await eventually(both_waiting, timeout=20, what="two refreshes waiting on the row")
            await holding.commit()
        finally:
            await blocker.close()
        answers = await asyncio.gather(*both)
        assert sorted(a.status_code for a in answers) == [200, 401]
        # the loser is a reuse: the winner's new token is revoked with the family
        winner = next(a for a in answers if a.status_code == 200).json()
        assert_401(await refresh(client, winner["refreshToken"]))
