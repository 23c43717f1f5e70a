from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest

from jobs_common.contracts import JobsSubmitted
from jobs_common.topology import SUBMITTED

from .conftest import ADMIN, EMAIL_JOB, OTHER, TOKEN, USER, AppFactory, Broker, wait_until

pytestmark = pytest.mark.integration


async def test_submission_is_published_exactly_once(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory() as app:
        response = await app.submit(
            {**EMAIL_JOB, "maxAttempts": 5, "timeoutSeconds": 90},
            key="k-1",
        )
        assert response.status_code == 202, response.text
        answer = response.json()
        assert answer["status"] == "accepted"
        job_id = answer["jobId"]
        assert uuid.UUID(job_id).version == 8  # jobs_common.ids: PostgreSQL's indexes stay local

        async def published() -> bool:
            doc = await collection.find_one({"_id": job_id})
            return doc is not None and doc["status"] == "published"

        await wait_until(published)
        status = await app.client.get(f"/api/v1/jobs/{job_id}/status", headers=app.headers())
        assert status.status_code == 200
        body = status.json()
        assert body["jobId"] == job_id
        assert body["status"] == "published"
        assert body["type"] == "email"
        assert body["priority"] == 2
        assert body["submittedBy"] == "user@test.com"
        assert body["idempotencyKey"] == "k-1"
        assert body["publishedAt"] is not None and body["createdAt"] is not None

    messages = await broker.drain_submitted()
    assert len(messages) == 1
    message = messages[0]
    assert message.routing_key == SUBMITTED
    (submitted,) = JobsSubmitted.model_validate_json(message.body).jobs
    assert str(submitted.job_id) == job_id
    assert submitted.job_type == "email"
    assert submitted.priority == 2
    assert submitted.submitted_by == "user@test.com"
    assert submitted.max_attempts == 5
    assert submitted.timeout_seconds == 90
    assert submitted.payload == EMAIL_JOB["payload"]
    assert message.delivery_mode == 2
    doc = await collection.find_one({"_id": job_id})
    assert doc["outbox"]["state"] == "sent"
    # the job keeps the ids it was stored with, the same on every republish
    assert str(submitted.message_id) == doc["messageId"]
    assert submitted.trace_id == doc["traceId"]
    assert message.correlation_id == doc["traceId"]  # the message traces its first job


async def test_concurrent_duplicates_with_one_key_make_one_job(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        responses = await asyncio.gather(*(app.submit(key="same-key") for _ in range(20)))
        assert {r.status_code for r in responses} == {202}
        job_ids = {r.json()["jobId"] for r in responses}
        assert len(job_ids) == 1
        assert sum(r.headers.get("Idempotent-Replayed") == "true" for r in responses) == 19
        # the key the service applied is in every answer; without one, null
        assert {r.json()["idempotencyKey"] for r in responses} == {"same-key"}
        assert (await app.submit()).json()["idempotencyKey"] is None
        assert await collection.count_documents({}) == 2
        # later retries get the same first answer
        again = await app.submit(key="same-key")
        assert again.status_code == 202 and again.json()["jobId"] in job_ids
        assert await collection.count_documents({}) == 2


async def test_same_key_with_another_body_is_a_conflict(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        first = await app.submit(key="k")
        assert first.status_code == 202
        other = await app.submit({**EMAIL_JOB, "priority": 3}, key="k")
        assert other.status_code == 409
        assert other.json()["error"] == "conflict"
        # the key is per user: another user may use the same key freely
        theirs = await app.submit(key="k", identity=OTHER)
        assert theirs.status_code == 202
        assert theirs.json()["jobId"] != first.json()["jobId"]
        # without a key, identical bodies are distinct jobs
        a, b = await app.submit(), await app.submit()
        assert a.json()["jobId"] != b.json()["jobId"]
        assert await collection.count_documents({}) == 4


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**EMAIL_JOB, "type": "teleport"}, "type"),
        ({**EMAIL_JOB, "priority": 7}, "priority"),
        ({**EMAIL_JOB, "payload": {"to": "nope", "subject": "s", "body": "b"}}, "payload.to"),
        ({**EMAIL_JOB, "timeoutSeconds": 5000}, "timeoutSeconds"),
    ],
)
async def test_invalid_submissions_store_nothing(
    app_factory: AppFactory, collection: Any, body: dict[str, Any], field: str
) -> None:
    async with app_factory(relay_enabled=False) as app:
        response = await app.submit(body, key="k")
        assert response.status_code == 422
        envelope = response.json()
        assert envelope["error"] == "validation_error"
        assert field in {d["field"] for d in envelope["details"]}
    assert await collection.count_documents({}) == 0


async def test_malformed_json_and_bad_key_are_rejected(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        headers = {**app.headers(), "content-type": "application/json"}
        broken = await app.client.post("/api/v1/jobs", content=b"{not json", headers=headers)
        assert broken.status_code == 400
        assert broken.json()["error"] == "bad_request"
        long_key = await app.submit(key="x" * 201)
        assert long_key.status_code == 422
        assert long_key.json()["error"] == "validation_error"
    assert await collection.count_documents({}) == 0


async def test_owner_rules(app_factory: AppFactory, collection: Any) -> None:
    async with app_factory(relay_enabled=False) as app:
        forbidden = await app.submit({**EMAIL_JOB, "submittedBy": "other@test.com"})
        assert forbidden.status_code == 403
        assert forbidden.json()["error"] == "forbidden"
        assert await collection.count_documents({}) == 0

        mine = (await app.submit()).json()["jobId"]
        for_other = await app.submit({**EMAIL_JOB, "submittedBy": "other@test.com"}, identity=ADMIN)
        assert for_other.status_code == 202
        theirs = for_other.json()["jobId"]

        async def status(job_id: str, who: Any) -> int:
            r = await app.client.get(f"/api/v1/jobs/{job_id}/status", headers=app.headers(who))
            return r.status_code

        assert await status(mine, USER) == 200
        assert await status(mine, OTHER) == 404
        assert await status(mine, ADMIN) == 200
        assert await status(theirs, OTHER) == 200
        assert await status(theirs, USER) == 404
        assert await status(str(uuid.uuid4()), ADMIN) == 404
        doc = await collection.find_one({"_id": theirs})
        assert doc["submittedBy"] == "other@test.com"


async def test_internal_token_is_required(app_factory: AppFactory, collection: Any) -> None:
    async with app_factory(relay_enabled=False) as app:
        identity_only = {k: v for k, v in app.headers().items() if k != "x-internal-token"}
        missing = await app.client.post("/api/v1/jobs", json=EMAIL_JOB, headers=identity_only)
        assert missing.status_code == 401
        assert missing.json()["error"] == "unauthorized"
        wrong = {**identity_only, "x-internal-token": TOKEN + "x"}
        assert (
            await app.client.post("/api/v1/jobs", json=EMAIL_JOB, headers=wrong)
        ).status_code == 401
        no_identity = {"x-internal-token": TOKEN}
        assert (
            await app.client.post("/api/v1/jobs", json=EMAIL_JOB, headers=no_identity)
        ).status_code == 401
        status = await app.client.get(f"/api/v1/jobs/{uuid.uuid4()}/status", headers=identity_only)
        assert status.status_code == 401
    assert await collection.count_documents({}) == 0


async def test_ops_routes(app_factory: AppFactory) -> None:
    async with app_factory() as app:
        assert (await app.client.get("/health")).json() == {"status": "ok"}
        ready = await app.client.get("/ready")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"mongo": True, "broker": True, "relay": True}
        assert (await app.submit()).status_code == 202
        metrics = (await app.client.get("/metrics")).text
        assert 'jobs_submission_submissions_total{outcome="accepted",type="email"}' in metrics
        assert "jobs_submission_relay_published_total" in metrics
        assert 'outbox_pending{service="submission"}' in metrics
        assert "jobs_submission_outbox_oldest_pending_seconds" in metrics
        assert "jobs_submission_relay_lag_seconds_bucket" in metrics
        schema = orjson.loads((await app.client.get("/openapi.json")).content)
        assert "/api/v1/jobs" in schema["paths"]
        assert "/api/v1/batches" in schema["paths"]
        assert "/api/v1/batches/{batchId}/status" in schema["paths"]
