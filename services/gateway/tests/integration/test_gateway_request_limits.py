"""Bounded requests at the gateway: a body above its route's limit is a 413 (declared or
chunked) that never reaches a backend; undeclared methods are a 405 naming the allowed ones,
with or without the web UI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from jobs_common.body_limit import KIB, MIB
from jobs_gateway.domain.headers import client_response_headers

from ..conftest import GatewayFactory, Upstreams

pytestmark = pytest.mark.integration

PROXIED = "DELETE, GET, PATCH, POST, PUT"


def assert_too_large(response: httpx.Response) -> None:
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["error"] == "payload_too_large"
    assert body["details"][0]["field"] == "body"
    assert response.headers["x-request-id"]  # answered inside the request-id middleware


async def chunks(size: int, count: int) -> AsyncIterator[bytes]:
    for _ in range(count):
        yield b"x" * size


async def test_a_12_mb_job_or_login_never_reaches_a_backend(
    gateway: httpx.AsyncClient, upstreams: Upstreams, user_token: str
) -> None:
    bearer = {"Authorization": f"Bearer {user_token}"}
    job = {"type": "email", "priority": 1, "payload": {"body": "x" * (12 * MIB)}}
    assert_too_large(await gateway.post("/api/jobs", json=job, headers=bearer))
    login = {"email": "user@test.com", "password": "x" * (12 * MIB)}
    assert_too_large(await gateway.post("/auth/login", json=login))
    # chunked (no Content-Length): counted as it comes, cut at the limit
    assert_too_large(
        await gateway.post(
            "/auth/login", content=chunks(KIB, 64), headers={"content-type": "application/json"}
        )
    )
    assert_too_large(
        await gateway.post(
            "/api/jobs/00000000-0000-4000-8000-000000000000/cancel",
            content=chunks(64 * KIB, 32),
            headers={**bearer, "content-type": "application/json"},
        )
    )
    assert upstreams.submission.calls() == []
    assert upstreams.dashboard.calls() == []


async def test_each_route_has_its_own_limit(
    gateway_factory: GatewayFactory, upstreams: Upstreams
) -> None:
    async with gateway_factory(
        submission_url=upstreams.submission.url,
        dashboard_url=upstreams.dashboard.url,
        max_body_bytes=100,
        max_job_body_bytes=1_000,
        max_batch_body_bytes=2_000,
    ) as client:
        login = await client.post(
            "/auth/login", json={"email": "user@test.com", "password": "user123"}
        )
        bearer = {"Authorization": f"Bearer {login.json()['token']}"}

        async def post(path: str, size: int) -> int:
            body = b"x" * size
            response = await client.post(path, content=body, headers=bearer)
            return response.status_code

        assert await post("/api/jobs", 1_000) == 200  # the echo backend answers
        assert await post("/api/jobs", 1_001) == 413
        assert await post("/api/batches", 2_000) == 200
        assert await post("/api/batches", 2_001) == 413
        assert await post("/api/dead-letters/some-id/requeue", 1_000) == 200
        assert await post("/api/schedules", 1_001) == 413
        assert await post("/api/jobs/some-id/cancel", 100) == 200
        assert await post("/api/jobs/some-id/cancel", 101) == 413
        forwarded = [len(call.body) for call in upstreams.submission.calls()]
        assert forwarded == [1_000, 2_000]
        assert [len(c.body) for c in upstreams.dashboard.calls()] == [1_000, 100]


@pytest.fixture
def build(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<!doctype html><div id=root></div>")
    return tmp_path


@pytest.mark.parametrize("with_ui", [False, True])
async def test_undeclared_methods_are_405_with_allow(
    gateway_factory: GatewayFactory, upstreams: Upstreams, build: Path, with_ui: bool
) -> None:
    async with gateway_factory(
        submission_url=upstreams.submission.url,
        dashboard_url=upstreams.dashboard.url,
        ui_dir=build if with_ui else None,
    ) as client:
        for method, path, allow in (
            ("TRACE", "/api/jobs", PROXIED),
            ("CONNECT", "/api/jobs", PROXIED),
            ("PROPFIND", "/api/jobs/x/status", PROXIED),
            ("HEAD", "/api/jobs", PROXIED),
            ("OPTIONS", "/api/dead-letters", PROXIED),
            ("TRACE", "/auth/login", "POST"),
            ("GET", "/auth/login", "POST"),
            ("DELETE", "/health", "GET"),
        ):
            response = await client.request(method, path)
            assert response.status_code == 405, (method, path, response.text)
            assert response.headers["allow"] == allow, (method, path)
            if method != "HEAD":
                assert response.json()["error"] == "method_not_allowed"
        if with_ui:
            for method in ("POST", "PUT", "DELETE", "TRACE"):
                response = await client.request(method, "/jobs/some-id")
                assert response.status_code == 405, (method, response.text)
                assert response.headers["allow"] == "GET, HEAD"
            assert (await client.get("/jobs/some-id")).status_code == 200
            unknown = await client.request("POST", "/auth/nothing-here")
            assert unknown.status_code == 404  # reserved for the API, which has no such route
        else:
            assert (await client.post("/jobs/some-id")).status_code == 404
    assert upstreams.submission.calls() == []
    assert upstreams.dashboard.calls() == []


def test_a_backends_allow_header_reaches_the_client() -> None:
    assert client_response_headers({"Allow": "POST", "Server": "x"}) == {"allow": "POST"}
