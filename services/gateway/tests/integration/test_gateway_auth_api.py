"""/auth against real PostgreSQL: login, refresh, register, me (sessions and limits: their
own modules)."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import jwt
import pytest

pytestmark = pytest.mark.integration

TEST_JWT_SECRET = "test-jwt-secret-0123456789abcdef-0123456789"


async def login(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/auth/login", json={"email": email, "password": password})


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["error"] == code
    assert isinstance(body["message"], str)
    assert isinstance(body["details"], list)
    return body


async def test_demo_users_log_in_with_their_roles(gateway: httpx.AsyncClient) -> None:
    for email, password, role in (
        ("admin@test.com", "admin123", "admin"),
        ("USER@Test.com", "user123", "user"),
    ):
        response = await login(gateway, email, password)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["tokenType"] == "bearer"
        assert body["expiresIn"] == 900
        assert body["user"]["email"] == email.lower()
        assert body["user"]["role"] == role
        claims = jwt.decode(
            body["token"],
            TEST_JWT_SECRET,
            algorithms=["HS256"],
            audience="jobs-api",
            issuer="jobs-gateway",
        )
        assert (claims["typ"], claims["role"], claims["sub"]) == (
            "access",
            role,
            body["user"]["id"],
        )
        assert claims["exp"] - claims["iat"] == 900
        me = await gateway.get("/auth/me", headers={"Authorization": f"Bearer {body['token']}"})
        assert me.json() == body["user"]


async def test_wrong_password_and_unknown_email_get_the_same_401(
    gateway: httpx.AsyncClient,
) -> None:
    wrong = assert_envelope(await login(gateway, "admin@test.com", "nope"), 401, "unauthorized")
    unknown = assert_envelope(await login(gateway, "ghost@test.com", "nope"), 401, "unauthorized")
    assert wrong == unknown


async def test_refresh_returns_a_new_pair_and_refuses_access_tokens(
    gateway: httpx.AsyncClient,
) -> None:
    first = (await login(gateway, "user@test.com", "user123")).json()
    response = await gateway.post("/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert response.status_code == 200, response.text
    second = response.json()
    assert second["user"] == first["user"]
    assert second["refreshToken"] != first["refreshToken"]  # rotated
    me = await gateway.get("/auth/me", headers={"Authorization": f"Bearer {second['token']}"})
    assert me.status_code == 200
    # an access token is not a refresh token, and a refresh token is not an access token
    refused = await gateway.post("/auth/refresh", json={"refreshToken": first["token"]})
    assert_envelope(refused, 401, "unauthorized")
    me = await gateway.get("/auth/me", headers={"Authorization": f"Bearer {first['refreshToken']}"})
    assert_envelope(me, 401, "unauthorized")
    assert_envelope(
        await gateway.post("/auth/refresh", json={"refreshToken": "x.y.z"}), 401, "unauthorized"
    )


async def register(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post("/auth/register", json={"email": email, "password": password})


async def test_register_answers_alike_for_new_and_taken_emails(
    gateway: httpx.AsyncClient,
) -> None:
    new = await register(gateway, "New.Person@Example.com", "longenough")
    assert new.status_code == 202, new.text
    assert set(new.json()) == {"message"}
    logged_in = await login(gateway, "new.person@example.com", "longenough")
    assert logged_in.status_code == 200
    assert logged_in.json()["user"]["role"] == "user"
    again = await register(gateway, "new.person@EXAMPLE.com", "otherpassword")
    demo = await register(gateway, "admin@test.com", "takeover123")
    for taken in (again, demo):
        assert (taken.status_code, taken.headers["content-type"], taken.content) == (
            new.status_code,
            new.headers["content-type"],
            new.content,
        )
    # a taken email keeps its owner's password and role
    assert (await login(gateway, "new.person@example.com", "otherpassword")).status_code == 401
    assert (await login(gateway, "admin@test.com", "takeover123")).status_code == 401
    admin = await login(gateway, "admin@test.com", "admin123")
    assert admin.json()["user"]["role"] == "admin"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "a@example.com", "password": "short"}, "password"),
        ({"email": "a@example.com", "password": "x" * 129}, "password"),
        ({"email": "not-an-email", "password": "longenough"}, "email"),
        ({"password": "longenough"}, "email"),
    ],
)
async def test_register_validation(
    gateway: httpx.AsyncClient, body: dict[str, str], field: str
) -> None:
    response = await gateway.post("/auth/register", json=body)
    envelope = assert_envelope(response, 422, "validation_error")
    assert field in {d["field"] for d in envelope["details"]}


async def test_me_without_token_is_401(gateway: httpx.AsyncClient) -> None:
    assert_envelope(await gateway.get("/auth/me"), 401, "unauthorized")


async def test_refresh_of_a_deleted_user_is_401(
    gateway: httpx.AsyncClient, gateway_database_url: str
) -> None:
    tokens = (await login(gateway, "user@test.com", "user123")).json()
    connection = await asyncpg.connect(gateway_database_url)
    try:
        await connection.execute("DELETE FROM gateway.users WHERE email = 'user@test.com'")
    finally:
        await connection.close()
    response = await gateway.post("/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert_envelope(response, 401, "unauthorized")
