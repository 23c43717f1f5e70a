"""The JWT matrix through the HTTP API: every bad access token is refused by /auth/me and
/api/*, every bad refresh token by /auth/refresh, each with 401 in the error envelope."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest

from jobs_common.auth import Identity, encode_token

from ..conftest import TEST_KEYS, Upstreams
from ..forged_tokens import ACCESS_CASES, REFRESH_CASES, bad_access_tokens, bad_refresh_tokens

pytestmark = pytest.mark.integration


async def user_identity(gateway: httpx.AsyncClient) -> tuple[Identity, str]:
    """The demo user's identity and a valid refresh token of theirs."""
    response = await gateway.post(
        "/auth/login", json={"email": "user@test.com", "password": "user123"}
    )
    body = response.json()
    user = body["user"]
    return Identity(user_id=user["id"], email=user["email"], role=user["role"]), body[
        "refreshToken"
    ]


def assert_401(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    body = response.json()
    assert body["error"] == "unauthorized"
    assert body["message"] in ("invalid token", "token expired")
    assert body["details"] == []


@pytest.mark.parametrize("case", ACCESS_CASES)
async def test_a_bad_access_token_is_401(
    gateway: httpx.AsyncClient, upstreams: Upstreams, case: str
) -> None:
    identity, _ = await user_identity(gateway)
    token = bad_access_tokens(TEST_KEYS, identity)[case]
    headers = {"Authorization": f"Bearer {token}"}
    assert_401(await gateway.get("/auth/me", headers=headers))
    assert_401(await gateway.get("/api/jobs", headers=headers))
    assert_401(await gateway.post("/api/jobs", headers=headers, json={"type": "email"}))
    assert upstreams.submission.calls() == upstreams.dashboard.calls() == []


@pytest.mark.parametrize("case", REFRESH_CASES)
async def test_a_bad_refresh_token_is_401(gateway: httpx.AsyncClient, case: str) -> None:
    identity, good = await user_identity(gateway)
    token = bad_refresh_tokens(TEST_KEYS, identity, good)[case]
    assert_401(await gateway.post("/auth/refresh", json={"refreshToken": token}))
    # none of them used up or revoked the real session
    assert (await gateway.post("/auth/refresh", json={"refreshToken": good})).status_code == 200


async def test_a_well_signed_refresh_token_that_was_never_issued_is_401(
    gateway: httpx.AsyncClient,
) -> None:
    identity, _ = await user_identity(gateway)
    forged = encode_token(
        {"sub": identity.user_id, "jti": str(uuid.uuid4())},
        keys=TEST_KEYS,
        ttl=timedelta(days=1),
        token_type="refresh",
    )
    assert_401(await gateway.post("/auth/refresh", json={"refreshToken": forged}))
