"""runAt / delaySeconds / retryPolicy / dependsOn through the API to the JobSubmitted message."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobs_common.contracts import JobSubmitted, RetryPolicySpec

from .conftest import ADMIN, EMAIL_JOB, OTHER, USER, AppFactory, Broker, wait_until

pytestmark = pytest.mark.integration


async def published(collection: Any, count: int) -> bool:
    return bool(await collection.count_documents({"outbox.state": "sent"}) == count)


async def messages_by_job(broker: Broker) -> dict[str, JobSubmitted]:
    return {str(m.job_id): m for m in await broker.drain_jobs()}


async def test_delayed_jobs_carry_run_at(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    run_at = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    async with app_factory() as app:
        before = datetime.now(UTC)
        delayed = await app.submit({**EMAIL_JOB, "delaySeconds": 600})
        after = datetime.now(UTC)
        at = await app.submit({**EMAIL_JOB, "runAt": run_at.astimezone().isoformat()})
        now = await app.submit(EMAIL_JOB)
        naive = await app.submit({**EMAIL_JOB, "runAt": "2030-01-01T00:00:00"})
        assert [r.status_code for r in (delayed, at, now)] == [202, 202, 202]
        assert naive.status_code == 422
        assert naive.json()["details"][0]["field"] == "runAt"
        await wait_until(lambda: published(collection, 3))
        status = await app.client.get(
            f"/api/v1/jobs/{at.json()['jobId']}/status", headers=app.headers()
        )
        assert datetime.fromisoformat(status.json()["runAt"]) == run_at

    messages = await messages_by_job(broker)
    assert len(messages) == 3
    first = messages[delayed.json()["jobId"]].run_at
    assert first is not None
    # acceptance time + 600 s, at millisecond precision
    assert before + timedelta(seconds=600) - timedelta(milliseconds=1) <= first
    assert first <= after + timedelta(seconds=600)
    assert messages[at.json()["jobId"]].run_at == run_at
    assert messages[now.json()["jobId"]].run_at is None


async def test_retry_policies_are_relayed(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    policy = {"strategy": "exponential", "baseDelayMs": 250, "maxDelayMs": 8000, "jitter": True}
    async with app_factory() as app:
        inline = await app.submit({**EMAIL_JOB, "retryPolicy": policy})
        named = await app.submit({**EMAIL_JOB, "retryPolicy": "gentle-backoff"})
        bad = await app.submit({**EMAIL_JOB, "retryPolicy": {"baseDelayMs": 9, "maxDelayMs": 1}})
        assert bad.status_code == 422
        assert bad.json()["details"] == [
            {"field": "retryPolicy", "message": "maxDelayMs must be >= baseDelayMs"}
        ]
        await wait_until(lambda: published(collection, 2))
    messages = await messages_by_job(broker)
    assert messages[inline.json()["jobId"]].retry_policy == RetryPolicySpec(
        strategy="exponential", base_delay_ms=250, max_delay_ms=8000, jitter=True
    )
    assert messages[inline.json()["jobId"]].retry_policy_name is None
    assert messages[named.json()["jobId"]].retry_policy_name == "gentle-backoff"
    assert messages[named.json()["jobId"]].retry_policy is None


async def test_depends_on_own_jobs_only(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory() as app:
        mine = (await app.submit()).json()["jobId"]
        theirs = (await app.submit(identity=OTHER)).json()["jobId"]
        missing = str(uuid.uuid4())
        assert await collection.count_documents({}) == 2

        refused = await app.submit({**EMAIL_JOB, "dependsOn": [mine, theirs, missing]}, key="d")
        assert refused.status_code == 422
        envelope = refused.json()
        assert envelope["error"] == "validation_error"
        assert envelope["details"] == [
            {"field": "dependsOn.1", "message": "unknown job"},
            {"field": "dependsOn.2", "message": "unknown job"},
        ]
        assert await collection.count_documents({}) == 2  # nothing stored

        child = await app.submit({**EMAIL_JOB, "dependsOn": [mine]}, key="d")
        assert child.status_code == 202
        # an admin submitting for OTHER needs OTHER's jobs as parents
        for_other = await app.submit(
            {**EMAIL_JOB, "submittedBy": "other@test.com", "dependsOn": [theirs]}, identity=ADMIN
        )
        assert for_other.status_code == 202
        wrong_owner = await app.submit(
            {**EMAIL_JOB, "submittedBy": "other@test.com", "dependsOn": [mine]}, identity=ADMIN
        )
        assert wrong_owner.status_code == 422
        # the idempotency hash covers dependsOn
        other_parents = await app.submit({**EMAIL_JOB, "dependsOn": []}, key="d")
        assert other_parents.status_code == 409
        await wait_until(lambda: published(collection, 4))

    messages = await messages_by_job(broker)
    assert [str(p) for p in messages[child.json()["jobId"]].depends_on] == [mine]
    assert [str(p) for p in messages[for_other.json()["jobId"]].depends_on] == [theirs]
    assert messages[for_other.json()["jobId"]].submitted_by == "other@test.com"
    assert messages[mine].depends_on == []
    assert USER.email == messages[mine].submitted_by
