"""Input the stores cannot hold is a 4xx in the error envelope, before anything is stored
(docs/api.md, "Text the platform refuses"): a NUL or a lone surrogate in a field of /auth
(PostgreSQL refuses both; a NUL in the login email used to answer 500), an over-long value,
and a NUL or non-UTF-8 bytes in the URL or a header of any route, refused before the proxy
forwards anything."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest

pytestmark = pytest.mark.integration

NUL_EMAIL = "a\u0000b@x.com"
BAD_EMAILS = [
    ("a\\u0000b@x.com", 422, "validation_error"),
    ("a\\ud800b@x.com", 400, "bad_request"),
    ("\\udc00", 400, "bad_request"),
    ("x" * 400 + "@x.com", 422, "validation_error"),
]
JSON = {"Content-Type": "application/json"}


def assert_refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["error"] == code
    assert isinstance(body["message"], str)
    assert body["details"], body
    assert all(set(d) == {"field", "message"} for d in body["details"])
    return body


async def user_rows(database_url: str) -> int:
    connection = await asyncpg.connect(database_url)
    try:
        count: int = await connection.fetchval("SELECT count(*) FROM gateway.users")
        return count
    finally:
        await connection.close()


async def test_a_nul_in_the_login_email_is_a_422_not_a_500(gateway: httpx.AsyncClient) -> None:
    response = await gateway.post("/auth/login", json={"email": NUL_EMAIL, "password": "x"})
    body = assert_refused(response, 422, "validation_error")
    assert [d["field"] for d in body["details"]] == ["email"]


@pytest.mark.parametrize(("email", "status", "code"), BAD_EMAILS)
@pytest.mark.parametrize("route", ["/auth/login", "/auth/register"])
async def test_auth_refuses_unstorable_or_over_long_emails(
    gateway: httpx.AsyncClient,
    gateway_database_url: str,
    route: str,
    email: str,
    status: int,
    code: str,
) -> None:
    before = await user_rows(gateway_database_url)
    content = f'{{"email": "{email}", "password": "long-enough-password"}}'.encode()
    response = await gateway.post(route, content=content, headers=JSON)
    body = assert_refused(response, status, code)
    assert [d["field"] for d in body["details"]] == ["email"]
    assert await user_rows(gateway_database_url) == before


@pytest.mark.parametrize(
    ("route", "content", "field"),
    [
        ("/auth/login", '{"email": "user@test.com", "password": "user\\u0000123"}', "password"),
        ("/auth/register", '{"email": "n@x.com", "password": "pass\\u0000word-long"}', "password"),
        ("/auth/refresh", '{"refreshToken": "abc\\u0000def"}', "refreshToken"),
        ("/auth/logout", '{"refreshToken": "abc\\u0000def"}', "refreshToken"),
        ("/auth/login", '{"email\\u0000": "user@test.com", "password": "user123"}', "email\\x00"),
    ],
)
async def test_every_auth_field_refuses_a_nul(
    gateway: httpx.AsyncClient, gateway_database_url: str, route: str, content: str, field: str
) -> None:
    before = await user_rows(gateway_database_url)
    response = await gateway.post(route, content=content.encode(), headers=JSON)
    body = assert_refused(response, 422, "validation_error")
    assert [d["field"] for d in body["details"]] == [field]
    assert await user_rows(gateway_database_url) == before


@pytest.mark.parametrize(
    ("route", "field", "size", "status", "code"),
    [
        ("/auth/login", "password", 129, 422, "validation_error"),
        ("/auth/register", "password", 129, 422, "validation_error"),
        # a field above the route's 4 KiB body: the body's limit answers first
        ("/auth/refresh", "refreshToken", 4097, 413, "payload_too_large"),
    ],
)
async def test_over_long_auth_fields_are_refused(
    gateway: httpx.AsyncClient, route: str, field: str, size: int, status: int, code: str
) -> None:
    body = {"email": "user@test.com", field: "x" * size}
    response = await gateway.post(route, json=body)
    refused = assert_refused(response, status, code)
    assert [d["field"] for d in refused["details"]] == [field if status == 422 else "body"]


@pytest.mark.parametrize(
    ("url", "status", "field"),
    [
        ("/api/jobs?type=a%00b", 422, "type"),
        ("/api/jobs?sortBy=%ED%A0%80", 400, "sortBy"),
        ("/api/jobs/a%00b/status", 422, "path"),
        ("/api/schedules/%ED%A0%80", 400, "path"),
        ("/auth/me?x=%00", 422, "x"),
    ],
)
async def test_the_url_is_checked_before_anything_is_forwarded(
    gateway: httpx.AsyncClient, upstreams: Any, user_token: str, url: str, status: int, field: str
) -> None:
    response = await gateway.get(url, headers={"Authorization": f"Bearer {user_token}"})
    body = assert_refused(response, status, "validation_error" if status == 422 else "bad_request")
    assert [d["field"] for d in body["details"]] == [field]
    assert response.headers["x-request-id"]
    assert upstreams.submission.calls() == [] and upstreams.dashboard.calls() == []


async def test_a_nul_in_a_header_is_refused_before_the_proxy(
    gateway: httpx.AsyncClient, upstreams: Any, user_token: str
) -> None:
    # What a client library refuses to send, sent as raw ASGI header bytes.
    headers = [
        (b"authorization", f"Bearer {user_token}".encode()),
        (b"idempotency-key", b"key\x00with-nul"),
        (b"content-type", b"application/json"),
    ]
    response = await gateway.post(
        "/api/jobs", content=b'{"type": "simulate", "priority": 2, "payload": {}}', headers=headers
    )
    body = assert_refused(response, 422, "validation_error")
    assert [d["field"] for d in body["details"]] == ["Idempotency-Key"]
    assert upstreams.submission.calls() == []


async def test_storable_text_passes_through(
    gateway: httpx.AsyncClient, upstreams: Any, user_token: str
) -> None:
    response = await gateway.get(
        "/api/jobs?type=h%C3%A9llo+%E2%9C%93", headers={"Authorization": f"Bearer {user_token}"}
    )
    assert response.status_code == 200
    [call] = upstreams.dashboard.calls()
    assert call.query == "type=h%C3%A9llo+%E2%9C%93"
