"""/health, /ready, /metrics and OpenAPI of the dashboard."""

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.integration


async def test_health_and_ready(client: httpx.AsyncClient) -> None:
    assert (await client.get("/health")).json() == {"status": "ok"}
    ready = await client.get("/ready")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"database": True, "broker": True}}


async def test_metrics_count_requests_by_route_and_retry_commands(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(status="dead")
    assert (await client.get(f"/api/jobs/{job_id}", headers=auth.user)).status_code == 200
    assert (await client.post(f"/api/jobs/{job_id}/retry", headers=auth.user)).status_code == 202
    text = (await client.get("/metrics")).text
    assert 'http_requests_total{method="GET",route="/api/jobs/{jobId}",status="200"}' in text
    assert 'http_request_duration_seconds_count{method="POST",' in text
    assert 'dashboard_commands_published_total{command="retry",outcome="confirmed"}' in text
    assert str(job_id) not in text  # route templates, never raw paths


async def test_openapi_lists_the_routes(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert {"/api/jobs", "/api/jobs/{jobId}", "/api/jobs/analytics", "/api/jobs/{jobId}/retry"} <= (
        set(paths)
    )
    assert {
        "/api/jobs/{jobId}/cancel",
        "/api/jobs/{jobId}/logs",
        "/api/dead-letters",
        "/api/dead-letters/groups",
        "/api/dead-letters/actions",
        "/api/dead-letters/bulk",
        "/api/dead-letters/{deadLetterId}/requeue",
        "/api/dead-letters/{deadLetterId}/discard",
        "/api/schedules",
        "/api/schedules/{scheduleId}",
        "/api/schedules/{scheduleId}/pause",
        "/api/schedules/{scheduleId}/resume",
        "/api/retry-policies",
        "/api/retry-policies/defaults",
        "/api/workers",
        "/api/batches/{batchId}",
        "/api/project-flow/{projectId}",
    } <= set(paths)
    assert (await client.get("/docs")).status_code == 200
