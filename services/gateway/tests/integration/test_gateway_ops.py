"""/health, /ready, /metrics, request ids, CORS, OpenAPI."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import httpx
import pytest

from jobs_gateway.adapters.metrics_server import metrics_app
from jobs_gateway.api.openapi import public_document

pytestmark = pytest.mark.integration


async def test_health_and_request_id(gateway: httpx.AsyncClient) -> None:
    response = await gateway.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert len(response.headers["x-request-id"]) == 32
    echoed = await gateway.get("/health", headers={"X-Request-Id": "abc-123"})
    assert echoed.headers["x-request-id"] == "abc-123"
    unsafe = await gateway.get("/health", headers={"X-Request-Id": "bad id\twith spaces"})
    assert unsafe.headers["x-request-id"] != "bad id\twith spaces"


async def test_ready_reports_each_dependency(gateway: httpx.AsyncClient) -> None:
    response = await gateway.get("/ready")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "status": "ready",
        "checks": {"database": True, "submission": True, "dashboard": True},
    }


async def test_not_ready_when_upstreams_are_down(
    gateway_factory: Callable[..., AbstractAsyncContextManager[httpx.AsyncClient]],
) -> None:
    async with gateway_factory() as client:
        response = await client.get("/ready")
    assert response.status_code == 503
    assert response.json()["checks"] == {
        "database": True,
        "submission": False,
        "dashboard": False,
    }


async def test_metrics_count_requests_and_upstream_calls(
    gateway: httpx.AsyncClient, admin_token: str
) -> None:
    await gateway.get("/api/jobs/j-1/status", headers={"Authorization": f"Bearer {admin_token}"})
    await gateway.get("/api/nowhere-in-particular")
    # Not on the public port: the metrics app serves them on GATEWAY_METRICS_PORT.
    public = await gateway.get("/metrics")
    assert public.status_code == 404
    assert public.json()["error"] == "not_found"
    transport = httpx.ASGITransport(app=metrics_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://metrics") as metrics:
        scraped = await metrics.get("/metrics")
        assert (await metrics.get("/api/jobs")).status_code == 404
    assert scraped.status_code == 200
    text = scraped.text
    assert 'http_requests_total{method="GET",route="/api/jobs/{jobId}/status",status="200"}' in text
    assert 'http_requests_total{method="GET",route="/api/{path}",status="401"}' in text
    assert 'gateway_upstream_requests_total{outcome="ok",upstream="submission"}' in text
    assert "http_request_duration_seconds_bucket" in text
    assert 'gateway_login_attempts_total{outcome="success"}' in text


async def test_cors_preflight_for_the_frontend(gateway: httpx.AsyncClient) -> None:
    response = await gateway.options(
        "/api/jobs",
        headers={
            "Origin": "http://localhost:5173",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "http://localhost:5173"
    other = await gateway.options(
        "/api/jobs",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in other.headers


async def test_openapi_is_the_public_contract_not_the_catch_all(gateway: httpx.AsyncClient) -> None:
    schema = (await gateway.get("/openapi.json")).json()
    assert schema == public_document()
    assert {"/auth/login", "/auth/refresh", "/auth/register", "/auth/me"} <= set(schema["paths"])
    assert "/api/{path}" not in schema["paths"]
    assert {"get", "post"} <= set(schema["paths"]["/api/jobs"])  # dashboard and submission
    assert (await gateway.get("/docs")).status_code == 200
