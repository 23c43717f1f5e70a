"""GET /api/jobs/{id}: the full record, its history and its open dead letter."""

import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.integration


async def test_detail_has_attempts_timeline_and_open_dead_letter(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    job_id = await job_factory.job(
        status="dead",
        attempt=2,
        attempt_limit=2,
        payload={"to": "a@b.c"},
        result=None,
        last_error="connection refused",
        last_error_class="ConnectionError",
        timeout_seconds=30,
        worker_id="worker-7",
        trace_id="trace-1",
        run_at=base,
        started_at=base + timedelta(seconds=10),
        finished_at=base + timedelta(seconds=20),
    )
    # inserted out of order: the answer is ordered by attempt and by event id
    await job_factory.attempt(
        job_id,
        2,
        worker_id="worker-7",
        dispatched_at=base + timedelta(seconds=15),
        duration_ms=900,
        error_class="ConnectionError",
        error="connection refused",
    )
    await job_factory.attempt(job_id, 1, worker_id="worker-3", dispatched_at=base, duration_ms=500)
    transitions = [
        (None, "pending", 0),
        ("pending", "queued", 1),
        ("queued", "running", 1),
        ("running", "failed", 1),
        ("failed", "queued", 2),
        ("queued", "dead", 2),
    ]
    for from_status, to_status, attempt in transitions:
        await job_factory.event(
            job_id, from_status=from_status, to_status=to_status, attempt=attempt, at=base
        )
    await job_factory.dead_letter(
        job_id, reason="old", created_at=base, resolved_at=base, resolution="requeued"
    )
    open_id = await job_factory.dead_letter(
        job_id, reason="attempts exhausted", last_error="connection refused"
    )

    response = await client.get(f"/api/jobs/{job_id}", headers=auth.user)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["jobId"] == str(job_id)
    assert body["payload"] == {"to": "a@b.c"}
    assert body["result"] is None
    assert (body["status"], body["attempt"], body["maxAttempts"]) == ("dead", 2, 2)
    assert body["lastError"] == "connection refused"
    assert body["lastErrorClass"] == "ConnectionError"
    assert body["timeoutSeconds"] == 30
    assert body["workerId"] is None  # worker internals are for admins
    assert body["traceId"] == "trace-1"
    assert body["runAt"].startswith("2024-05-01T12:00:00")
    assert body["leaseExpiresAt"] is None
    assert [a["attempt"] for a in body["attempts"]] == [1, 2]
    assert body["attempts"][1] == {
        "attempt": 2,
        "status": "failed",
        "workerId": None,
        "dispatchedAt": body["attempts"][1]["dispatchedAt"],
        "startedAt": None,
        "finishedAt": None,
        "durationMs": 900,
        "errorClass": "ConnectionError",
        "error": "connection refused",
    }
    assert [(e["fromStatus"], e["toStatus"], e["attempt"]) for e in body["timeline"]] == (
        transitions
    )
    assert set(body["timeline"][0]) == {"fromStatus", "toStatus", "reason", "attempt", "at"}
    assert body["deadLetter"]["id"] == str(open_id)
    assert body["deadLetter"]["reason"] == "attempts exhausted"
    assert body["deadLetter"]["lastError"] == "connection refused"
    assert set(body["deadLetter"]) == {"id", "reason", "lastError", "createdAt"}

    seen_by_admin = (await client.get(f"/api/jobs/{job_id}", headers=auth.admin)).json()
    assert seen_by_admin["workerId"] == "worker-7"
    assert [a["workerId"] for a in seen_by_admin["attempts"]] == ["worker-3", "worker-7"]


async def test_detail_of_a_fresh_job_has_empty_history(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(status="pending", attempt=0, result={"ok": True})
    body = (await client.get(f"/api/jobs/{job_id}", headers=auth.user)).json()
    assert body["attempts"] == []
    assert body["timeline"] == []
    assert body["deadLetter"] is None
    assert body["attempt"] == 0
    assert body["result"] == {"ok": True}


async def test_another_users_job_is_not_found(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(submitted_by=auth.other_email)
    response = await client.get(f"/api/jobs/{job_id}", headers=auth.user)
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    unknown = await client.get(f"/api/jobs/{uuid.uuid4()}", headers=auth.user)
    assert unknown.status_code == 404
    # same answer for "exists but not yours" and "does not exist"
    assert response.json()["error"] == unknown.json()["error"]
    assert (await client.get(f"/api/jobs/{job_id}", headers=auth.other)).status_code == 200
    assert (await client.get(f"/api/jobs/{job_id}", headers=auth.admin)).status_code == 200


async def test_invalid_uuid_is_422(client: httpx.AsyncClient, auth: Any) -> None:
    response = await client.get("/api/jobs/not-a-uuid", headers=auth.user)
    assert response.status_code == 422
    assert response.json()["error"] == "validation_error"
    assert response.json()["details"][0]["field"] == "jobId"


async def test_detail_requires_the_internal_token(
    client: httpx.AsyncClient, job_factory: Any
) -> None:
    job_id = await job_factory.job()
    assert (await client.get(f"/api/jobs/{job_id}")).status_code == 401
