"""/auth against real PostgreSQL: login, refresh, register, me, rate limit."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import jwt
import pytest

from jobs_gateway.app import create_app
from jobs_gateway.domain.rate_limit import TokenBucketLimiter

from ..conftest import SettingsFactory, running

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
        assert body["expiresIn"] == 3600
        assert body["user"]["email"] == email.lower()
        assert body["user"]["role"] == role
        claims = jwt.decode(body["token"], TEST_JWT_SECRET, algorithms=["HS256"])
        assert (claims["typ"], claims["role"], claims["sub"]) == (
            "access",
            role,
            body["user"]["id"],
        )
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


async def test_register_then_login_and_duplicates_conflict(gateway: httpx.AsyncClient) -> None:
    response = await gateway.post(
        "/auth/register", json={"email": "New.Person@Example.com", "password": "longenough"}
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["email"] == "new.person@example.com"
    assert created["role"] == "user"
    assert set(created) == {"id", "email", "role"}
    logged_in = await login(gateway, "new.person@example.com", "longenough")
    assert logged_in.status_code == 200
    assert logged_in.json()["user"]["id"] == created["id"]
    again = await gateway.post(
        "/auth/register", json={"email": "new.person@EXAMPLE.com", "password": "otherpassword"}
    )
    assert_envelope(again, 409, "conflict")
    demo = await gateway.post(
        "/auth/register", json={"email": "admin@test.com", "password": "takeover123"}
    )
    assert_envelope(demo, 409, "conflict")


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


async def test_login_is_rate_limited_per_email_and_ip(make_settings: SettingsFactory) -> None:
    settings = make_settings()
    app = create_app(settings)
    async with running(app) as gateway:
        # The configured limit on a stopped clock: ten slow password checks must not refill it.
        app.state.accounts.login_limiter = TokenBucketLimiter(
            capacity=settings.login_attempts_per_minute, clock=lambda: 0.0
        )
        statuses = [
            (await login(gateway, "user@test.com", "wrong-password")).status_code for _ in range(10)
        ]
        assert statuses == [401] * 10
        limited = await login(gateway, "user@test.com", "user123")
        assert_envelope(limited, 429, "too_many_requests")
        # another email from the same client is not affected
        assert (await login(gateway, "admin@test.com", "admin123")).status_code == 200


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
