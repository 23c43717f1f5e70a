"""GET /api/jobs/analytics: counts, success rate, runtime and throughput within visibility."""

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jobs_common.contracts import JobStatus
from jobs_testing.stats import percentile_cont

pytestmark = pytest.mark.integration


async def test_empty_analytics(client: httpx.AsyncClient, auth: Any) -> None:
    response = await client.get("/api/jobs/analytics", headers=auth.user)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {
        "total": 0,
        "countsByStatus": {s.value: 0 for s in JobStatus},
        "countsByType": {},
        "countsByPriority": {"1": 0, "2": 0, "3": 0},
        "successRate": None,
        "runtime": {"meanMs": None, "p95Ms": None},
        "throughputLastHour": 0,
    }


async def test_analytics_numbers(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    now = datetime.now(UTC)
    durations_ms = [100.0, 200.0, 300.0, 400.0, 1500.0]
    for index, duration in enumerate(durations_ms):
        finished = now - timedelta(minutes=10) if index < 3 else now - timedelta(hours=3)
        await job_factory.job(
            status="succeeded",
            type="echo",
            priority=1,
            started_at=finished - timedelta(milliseconds=duration),
            finished_at=finished,
        )
    await job_factory.job(
        status="dead", type="email", priority=3, finished_at=now - timedelta(minutes=5)
    )
    await job_factory.job(status="running", type="email", priority=2, started_at=now)
    await job_factory.job(status="queued", type="report", priority=2)
    # succeeded but never started: counted, but not part of the runtime
    await job_factory.job(status="succeeded", type="echo", priority=1, finished_at=None)
    # another user's jobs are invisible to the user, visible to the admin
    await job_factory.job(
        status="dead", type="other", priority=3, submitted_by=auth.other_email, finished_at=now
    )

    body = (await client.get("/api/jobs/analytics", headers=auth.user)).json()
    assert body["total"] == 9
    assert body["countsByStatus"] == {
        **{s.value: 0 for s in JobStatus},
        "succeeded": 6,
        "dead": 1,
        "running": 1,
        "queued": 1,
    }
    assert body["countsByType"] == {"echo": 6, "email": 2, "report": 1}
    assert body["countsByPriority"] == {"1": 6, "2": 2, "3": 1}
    assert body["successRate"] == pytest.approx(6 / 7)
    assert body["runtime"]["meanMs"] == pytest.approx(sum(durations_ms) / 5, abs=0.01)
    assert body["runtime"]["p95Ms"] == pytest.approx(percentile_cont(durations_ms, 0.95), abs=0.01)
    assert body["throughputLastHour"] == 4  # three succeeded + one dead within the hour

    admin = (await client.get("/api/jobs/analytics", headers=auth.admin)).json()
    assert admin["total"] == 10
    assert admin["countsByStatus"]["dead"] == 2
    assert admin["countsByType"]["other"] == 1
    assert admin["successRate"] == pytest.approx(6 / 8)
    assert admin["throughputLastHour"] == 5

    other = (await client.get("/api/jobs/analytics", headers=auth.other)).json()
    assert other["total"] == 1
    assert other["successRate"] == 0.0


async def test_analytics_created_window(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    await job_factory.job(status="succeeded", created_at=base)
    await job_factory.job(status="dead", created_at=base + timedelta(days=1))
    body = (
        await client.get(
            "/api/jobs/analytics",
            params={"createdFrom": (base + timedelta(hours=1)).isoformat()},
            headers=auth.user,
        )
    ).json()
    assert body["total"] == 1
    assert body["countsByStatus"]["dead"] == 1
    assert body["successRate"] == 0.0
    bad = await client.get(
        "/api/jobs/analytics",
        params={"createdFrom": base.isoformat(), "createdTo": (base - timedelta(1)).isoformat()},
        headers=auth.user,
    )
    assert bad.status_code == 422


async def test_analytics_route_is_not_captured_by_job_detail(
    client: httpx.AsyncClient, auth: Any
) -> None:
    response = await client.get("/api/jobs/analytics", headers=auth.user)
    assert response.status_code == 200
    assert "countsByStatus" in response.json()
    assert (await client.get("/api/jobs/analytics")).status_code == 401
