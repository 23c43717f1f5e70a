"""The proxy against real upstreams (an ASGI echo app served by uvicorn)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import timedelta
from typing import Any

import httpx
import orjson
import pytest

from jobs_common.auth import Identity, TokenKeys, issue_token

pytestmark = pytest.mark.integration

TEST_JWT_SECRET = "test-jwt-secret-0123456789abcdef-0123456789"
TEST_KEYS = TokenKeys(secret=TEST_JWT_SECRET, issuer="jobs-gateway", audience="jobs-api")
TEST_INTERNAL_TOKEN = "test-internal-token-0123456789abcdef"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_envelope(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert response.headers["x-request-id"]


async def test_submit_goes_to_submission_with_the_gateway_identity(
    gateway: httpx.AsyncClient, upstreams: Any, user_token: str
) -> None:
    body = orjson.dumps({"type": "email", "priority": 2, "payload": {"to": "a@b.c"}})
    response = await gateway.post(
        "/api/jobs?x=1&y=%20z",
        content=body,
        headers={
            **bearer(user_token),
            "Content-Type": "application/json",
            "Idempotency-Key": "key-1",
            "X-Request-Id": "req-abc",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "X-User-Role": "admin",
            "X-User-Email": "root@evil.io",
            "X-User-Id": "0",
            "X-Internal-Token": "guessed",
            "Connection": "keep-alive, x-drop-me",
            "X-Drop-Me": "1",
        },
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.echo+json"
    assert response.json() == {"upstream": "submission", "method": "POST", "path": "/api/v1/jobs"}
    assert response.headers["x-request-id"] == "req-abc"
    assert response.headers["location"] == "/somewhere"
    assert "x-upstream-private" not in response.headers
    assert "set-cookie" not in response.headers

    assert upstreams.dashboard.calls() == []
    [call] = upstreams.submission.calls()
    assert call.body == body
    assert call.query == "x=1&y=%20z"
    assert call.header("x-user-role") == "user"
    assert call.header("x-user-email") == "user@test.com"
    assert call.header("x-user-id") not in (None, "0")
    assert call.header("x-internal-token") == TEST_INTERNAL_TOKEN
    assert call.header("idempotency-key") == "key-1"
    assert call.header("content-type") == "application/json"
    assert call.header("x-request-id") == "req-abc"
    assert (
        call.header(
            "traceparent",
        )
        is not None
    )
    for name in ("x-user-role", "x-user-email", "x-user-id", "x-internal-token"):
        assert [v for k, v in call.headers if k == name] == [call.header(name)]
    assert "authorization" not in call.header_names()
    assert "x-drop-me" not in call.header_names()
    assert call.header("x-forwarded-for") == "10.1.2.3"


@pytest.mark.parametrize(
    ("method", "path", "upstream", "upstream_path"),
    [
        ("GET", "/api/jobs/j-1/status", "submission", "/api/v1/jobs/j-1/status"),
        ("POST", "/api/batches", "submission", "/api/v1/batches"),
        ("GET", "/api/batches/b-1/status", "submission", "/api/v1/batches/b-1/status"),
        ("GET", "/api/jobs?pageNumber=2&sortBy=createdAt", "dashboard", "/api/jobs"),
        ("GET", "/api/jobs/j-1", "dashboard", "/api/jobs/j-1"),
        ("GET", "/api/jobs/analytics", "dashboard", "/api/jobs/analytics"),
        ("POST", "/api/jobs/j-1/retry", "dashboard", "/api/jobs/j-1/retry"),
        ("DELETE", "/api/schedules/s-1", "dashboard", "/api/schedules/s-1"),
        ("PATCH", "/api/workers/w-1", "dashboard", "/api/workers/w-1"),
    ],
)
async def test_routing_table_reaches_the_right_upstream(
    gateway: httpx.AsyncClient,
    upstreams: Any,
    admin_token: str,
    method: str,
    path: str,
    upstream: str,
    upstream_path: str,
) -> None:
    response = await gateway.request(method, path, headers=bearer(admin_token))
    assert response.status_code == 200, response.text
    assert response.json() == {"upstream": upstream, "method": method, "path": upstream_path}
    [call] = getattr(upstreams, upstream).calls()
    assert call.query == (path.split("?", 1)[1] if "?" in path else "")
    assert call.header("x-user-role") == "admin"


async def test_upstream_status_and_body_pass_through(
    gateway: httpx.AsyncClient, upstreams: Any, user_token: str
) -> None:
    for status in (202, 404, 409, 500):
        response = await gateway.get(f"/api/jobs/j-1?status={status}", headers=bearer(user_token))
        assert response.status_code == status
        assert response.json()["upstream"] == "dashboard"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer not-a-jwt"},
    ],
)
async def test_api_without_a_valid_bearer_is_401_and_never_proxied(
    gateway: httpx.AsyncClient, upstreams: Any, headers: dict[str, str]
) -> None:
    for method, path in (("GET", "/api/jobs"), ("POST", "/api/jobs")):
        assert_envelope(await gateway.request(method, path, headers=headers), 401, "unauthorized")
    assert upstreams.submission.calls() == upstreams.dashboard.calls() == []


async def test_expired_foreign_and_refresh_tokens_are_401(
    gateway: httpx.AsyncClient, upstreams: Any
) -> None:
    alice = Identity(user_id="9b7c2c52-1111-4000-8000-000000000000", email="a@x.io", role="admin")
    expired = issue_token(alice, keys=TEST_KEYS, ttl=timedelta(seconds=-1))
    foreign = issue_token(
        alice,
        keys=replace(TEST_KEYS, secret="some-other-secret-0123456789abcdef-0123"),
        ttl=timedelta(minutes=5),
    )
    refresh = issue_token(alice, keys=TEST_KEYS, ttl=timedelta(minutes=5), token_type="refresh")
    for token in (expired, foreign, refresh):
        assert_envelope(await gateway.get("/api/jobs", headers=bearer(token)), 401, "unauthorized")
    assert upstreams.dashboard.calls() == []


async def test_path_traversal_is_refused(gateway: httpx.AsyncClient, user_token: str) -> None:
    response = await gateway.get("/api/jobs/%2e%2e/%2e%2e/health", headers=bearer(user_token))
    assert_envelope(response, 400, "bad_request")


async def test_unreachable_upstream_is_503(
    gateway_factory: Callable[..., AbstractAsyncContextManager[httpx.AsyncClient]],
) -> None:
    # make_settings points both upstreams at free ports where nothing listens
    async with gateway_factory() as client:
        token = (
            await client.post("/auth/login", json={"email": "user@test.com", "password": "user123"})
        ).json()["token"]
        for method, path in (("POST", "/api/jobs"), ("GET", "/api/jobs")):
            response = await client.request(method, path, headers=bearer(token))
            assert_envelope(response, 503, "service_unavailable")


async def test_slow_upstream_times_out_as_503(
    gateway_factory: Callable[..., AbstractAsyncContextManager[httpx.AsyncClient]],
    upstreams: Any,
) -> None:
    async with gateway_factory(
        submission_url=upstreams.submission.url,
        dashboard_url=upstreams.dashboard.url,
        upstream_timeout_seconds=0.3,
    ) as client:
        token = (
            await client.post("/auth/login", json={"email": "user@test.com", "password": "user123"})
        ).json()["token"]
        response = await client.get("/api/jobs/slow", headers=bearer(token))
        assert_envelope(response, 503, "service_unavailable")
        assert [c.raw_path for c in upstreams.dashboard.calls()] == ["/api/jobs/slow"]
        upstreams.dashboard.release.set()
