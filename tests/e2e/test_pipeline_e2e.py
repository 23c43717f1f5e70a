"""One job travels the whole path for real: gateway -> submission (MongoDB + outbox) ->
RabbitMQ -> scheduler (PostgreSQL) -> ready queue -> worker -> results -> dashboard API."""

from __future__ import annotations

import asyncio
import base64
import io
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from PIL import Image

from jobs_common.mongo import create_client
from jobs_testing.plugin import SmtpSink
from jobs_testing.stack import Stack

from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TERMINAL = {"succeeded", "dead", "cancelled"}
FAST_SUCCESS = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.05}


def png(width: int = 64, height: int = 48) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 90)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


async def submit(client: httpx.AsyncClient, body: dict[str, Any], **headers: str) -> str:
    response = await client.post("/api/jobs", json=body, headers=headers)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "accepted"
    job_id: str = response.json()["jobId"]
    return job_id


async def test_api_requires_a_valid_token(gateway_url: str) -> None:
    async with httpx.AsyncClient(base_url=gateway_url) as client:
        assert (await client.get("/api/jobs")).status_code == 401
        bad = await client.get("/api/jobs", headers={"Authorization": "Bearer not.a.token"})
        assert bad.status_code == 401
        assert bad.json()["error"] == "unauthorized"
        spoofed = await client.get(
            "/api/jobs", headers={"X-User-Email": "admin@test.com", "X-User-Role": "admin"}
        )
        assert spoofed.status_code == 401


async def test_every_job_type_succeeds_end_to_end(
    user: httpx.AsyncClient, e2e_smtp: SmtpSink, stack: Stack
) -> None:
    subject = f"hello {uuid.uuid4().hex[:8]}"
    ids = {
        "email": await submit(
            user,
            {
                "type": "email",
                "priority": 3,
                "payload": {"to": "someone@example.com", "subject": subject, "body": "Hi there"},
            },
        ),
        "image_resize": await submit(
            user,
            {
                "type": "image_resize",
                "priority": 2,
                "payload": {"imageBase64": png(), "width": 16, "height": 12, "format": "webp"},
            },
        ),
        "report_generation": await submit(
            user,
            {
                "type": "report_generation",
                "priority": 1,
                "payload": {"reportType": "jobs_summary", "format": "csv"},
            },
        ),
        "simulate": await submit(
            user, {"type": "simulate", "priority": 2, "payload": FAST_SUCCESS}
        ),
    }
    finished = {kind: await wait_for_job(user, job_id, TERMINAL) for kind, job_id in ids.items()}
    for kind, job in finished.items():
        assert job["status"] == "succeeded", (kind, job)
        assert job["attempts"][-1]["status"] == "succeeded"

    status = await user.get(f"/api/jobs/{ids['email']}/status")
    assert status.status_code == 200
    assert status.json()["status"] == "published"

    async with asyncio.timeout(30):
        mail = await e2e_smtp.wait_for(lambda m: m["Subject"] == subject)
    assert mail["To"] == "someone@example.com"

    image = finished["image_resize"]["result"]
    assert (image["width"], image["height"], image["format"]) == (16, 12, "webp")
    assert "path" not in image  # the artifact's key, not the worker's path of it
    with Image.open(Path(stack.config.artifacts_dir) / image["artifact"]) as resized:
        assert resized.size == (16, 12)
    assert finished["report_generation"]["result"]


async def test_permanent_failure_is_dead_after_one_attempt(user: httpx.AsyncClient) -> None:
    undecodable = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20).decode()
    job_id = await submit(
        user,
        {
            "type": "image_resize",
            "priority": 2,
            "maxAttempts": 3,
            "payload": {"imageBase64": undecodable, "width": 10, "height": 10},
        },
    )
    job = await wait_for_job(user, job_id, TERMINAL)
    assert job["status"] == "dead"
    assert len(job["attempts"]) == 1, "a permanent error must not be retried"
    assert job["lastError"]


async def test_retryable_failure_uses_every_attempt_then_a_retry_runs_it_again(
    user: httpx.AsyncClient,
) -> None:
    always_fails = {"immediateFailureRate": 1, "minSeconds": 0, "maxSeconds": 0}
    job_id = await submit(
        user, {"type": "simulate", "priority": 3, "maxAttempts": 3, "payload": always_fails}
    )
    job = await wait_for_job(user, job_id, TERMINAL)
    assert job["status"] == "dead"
    assert [a["attempt"] for a in job["attempts"]] == [1, 2, 3]
    assert all(a["status"] == "failed" for a in job["attempts"])
    assert job["deadLetter"]["reason"] == "max_attempts"

    retried = await user.post(f"/api/jobs/{job_id}/retry")
    assert retried.status_code == 202, retried.text

    async def attempts_after_retry() -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + 60
        while asyncio.get_running_loop().time() < deadline:
            current = (await user.get(f"/api/jobs/{job_id}")).json()
            if current["status"] == "dead" and len(current["attempts"]) == 6:
                return current
            await asyncio.sleep(0.1)
        raise AssertionError("the retried job did not run its fresh attempts")

    again = await attempts_after_retry()
    assert [a["attempt"] for a in again["attempts"]] == [1, 2, 3, 4, 5, 6]

    not_dead = await submit(user, {"type": "simulate", "priority": 1, "payload": FAST_SUCCESS})
    await wait_for_job(user, not_dead, {"succeeded"})
    conflict = await user.post(f"/api/jobs/{not_dead}/retry")
    assert conflict.status_code == 409
    assert conflict.json()["error"] == "conflict"


async def _mongo_count(stack: Stack) -> int:
    client = create_client(stack.config.mongo_url)
    try:
        return await client[stack.config.mongo_db]["submissions"].count_documents({})
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "nope", "priority": 1, "payload": {}}, "type"),
        (
            {
                "type": "email",
                "priority": 4,
                "payload": {"to": "a@b.co", "subject": "s", "body": "b"},
            },
            "priority",
        ),
        (
            {
                "type": "email",
                "priority": 1,
                "payload": {"to": "not-an-email", "subject": "s", "body": "b"},
            },
            "payload.to",
        ),
        (
            {
                "type": "email",
                "priority": 1,
                "payload": {"to": "a@b.co", "subject": "", "body": "b"},
            },
            "payload.subject",
        ),
        (
            {
                "type": "image_resize",
                "priority": 1,
                "payload": {"imageBase64": "aGVsbG8=", "width": 10, "height": 10},
            },
            "payload.imageBase64",
        ),
        (
            {
                "type": "image_resize",
                "priority": 1,
                "payload": {"imageBase64": png(), "width": 0, "height": 10},
            },
            "payload.width",
        ),
        (
            {
                "type": "report_generation",
                "priority": 1,
                "payload": {"reportType": "jobs_summary", "format": "pdf"},
            },
            "payload.format",
        ),
        ({"type": "simulate", "priority": 1, "payload": {}, "maxAttempts": 21}, "maxAttempts"),
    ],
)
async def test_bad_input_is_rejected_and_stores_nothing(
    user: httpx.AsyncClient, stack: Stack, body: dict[str, Any], field: str
) -> None:
    before = await _mongo_count(stack)
    response = await user.post("/api/jobs", json=body)
    assert response.status_code in (400, 422), response.text
    error = response.json()
    assert error["error"] == "validation_error"
    assert any(d["field"].startswith(field) for d in error["details"]), error
    assert await _mongo_count(stack) == before


async def test_a_user_cannot_see_or_touch_another_users_job(
    admin: httpx.AsyncClient, user: httpx.AsyncClient
) -> None:
    admins_job = await submit(admin, {"type": "simulate", "priority": 1, "payload": FAST_SUCCESS})
    await wait_for_job(admin, admins_job, TERMINAL)
    assert (await user.get(f"/api/jobs/{admins_job}")).status_code == 404
    assert (await user.get(f"/api/jobs/{admins_job}/status")).status_code == 404
    assert (await user.post(f"/api/jobs/{admins_job}/retry")).status_code == 404
    listing = (await user.get("/api/jobs", params={"pageSize": 100})).json()
    assert all(item["submittedBy"] == "user@test.com" for item in listing["items"])
    for_someone_else = await user.post(
        "/api/jobs",
        json={"type": "simulate", "priority": 1, "payload": {}, "submittedBy": "admin@test.com"},
    )
    assert for_someone_else.status_code == 403
    assert (await admin.get(f"/api/jobs/{admins_job}")).status_code == 200


async def test_idempotency_key_returns_the_first_job(user: httpx.AsyncClient) -> None:
    key = str(uuid.uuid4())
    body = {"type": "simulate", "priority": 1, "payload": FAST_SUCCESS}
    first, second = await asyncio.gather(
        user.post("/api/jobs", json=body, headers={"Idempotency-Key": key}),
        user.post("/api/jobs", json=body, headers={"Idempotency-Key": key}),
    )
    assert first.status_code == second.status_code == 202
    assert first.json()["jobId"] == second.json()["jobId"]
    # The repeat says it is one, through the gateway (the only public entry).
    replayed = sorted(r.headers.get("Idempotent-Replayed", "") for r in (first, second))
    assert replayed == ["", "true"]
    other = await user.post(
        "/api/jobs", json={**body, "priority": 2}, headers={"Idempotency-Key": key}
    )
    assert other.status_code == 409


async def test_500_concurrent_jobs_each_reach_one_terminal_state(
    admin: httpx.AsyncClient, stack: Stack
) -> None:
    flaky = {"immediateFailureRate": 0.1, "failureRate": 0.1, "minSeconds": 0, "maxSeconds": 0.02}
    gate = asyncio.Semaphore(50)

    async def one(index: int) -> str:
        async with gate:
            return await submit(
                admin,
                {"type": "simulate", "priority": 1 + index % 3, "maxAttempts": 3, "payload": flaky},
            )

    job_ids = await asyncio.gather(*(one(i) for i in range(500)))
    assert len(set(job_ids)) == 500

    connection = await asyncpg.connect(
        stack.config.database_url.replace("postgresql+asyncpg://", "postgresql://")
    )
    try:
        deadline = asyncio.get_running_loop().time() + 180
        while True:
            rows = await connection.fetch(
                "SELECT id::text, status FROM jobs WHERE id = ANY($1::uuid[])", job_ids
            )
            if len(rows) == 500 and all(r["status"] in TERMINAL for r in rows):
                break
            assert asyncio.get_running_loop().time() < deadline, (
                f"{sum(r['status'] in TERMINAL for r in rows)} of 500 terminal"
            )
            await asyncio.sleep(0.5)
        endings = await connection.fetch(
            """
            SELECT j.id::text AS id, j.status,
                   (SELECT count(*) FROM job_attempts a
                     WHERE a.job_id = j.id AND a.status = 'succeeded') AS wins,
                   (SELECT count(*) FROM job_events e
                     WHERE e.job_id = j.id AND e.to_status IN ('succeeded', 'dead', 'cancelled'))
                     AS endings
            FROM jobs j WHERE j.id = ANY($1::uuid[])
            """,
            job_ids,
        )
    finally:
        await connection.close()
    assert len(endings) == 500
    for row in endings:
        assert row["endings"] == 1, dict(row)  # reached a terminal state exactly once
        assert row["wins"] == (1 if row["status"] == "succeeded" else 0), dict(row)

    client = create_client(stack.config.mongo_url)
    try:
        docs = (
            await client[stack.config.mongo_db]["submissions"]
            .find({"_id": {"$in": job_ids}}, {"status": 1})
            .to_list(None)
        )
    finally:
        await client.close()
    assert len(docs) == 500
    assert {d["status"] for d in docs} == {"published"}
