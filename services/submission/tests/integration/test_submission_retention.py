"""Submission documents expire through a TTL index on ``publishedAt`` (docs/operations.md,
"Retention"): the service builds it from SUBMISSION_RETENTION_DAYS at start, changes it in
place when the setting changes, drops it at 0; a document gets ``publishedAt`` only once its
publish was confirmed, so a pending one never expires. MongoDB (its TTL monitor) deletes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobs_common.mongo import create_client
from jobs_submission.adapters.mongo import BATCHES, SubmissionStore

from .conftest import AppFactory, Broker, wait_until

pytestmark = pytest.mark.integration

DAY = 86_400
DAYS = timedelta(days=1)


async def ttl_of(collection: Any, field: str = "publishedAt") -> int | None:
    """The TTL of the index on ``field`` (the stand-in names indexes its own way)."""
    ttls = [
        index["expireAfterSeconds"]
        for index in (await collection.index_information()).values()
        if index["key"] == [(field, 1)] and "expireAfterSeconds" in index
    ]
    assert len(ttls) <= 1, ttls
    return ttls[0] if ttls else None


async def test_the_retention_index_follows_the_setting(
    mongo_url: str, mongo_db_name: str, collection: Any
) -> None:
    client = create_client(mongo_url)
    store = SubmissionStore(client, mongo_db_name)
    try:
        await store.ensure_indexes(timedelta(days=7))
        assert await ttl_of(collection) == 7 * DAY
        await store.ensure_indexes(timedelta(days=7))  # a restart changes nothing
        await store.ensure_indexes(timedelta(days=1.5))
        assert await ttl_of(collection) == 1.5 * DAY
        await store.ensure_indexes(None)
        assert await ttl_of(collection) is None
    finally:
        await client.close()


async def test_only_a_published_submission_can_expire(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:  # nothing is published
        assert await ttl_of(collection) == 7 * DAY  # the default: a week
        answer = await app.submit()
        assert answer.status_code == 202, answer.text
        job_id = answer.json()["jobId"]
        pending = await collection.find_one({"_id": job_id})
        assert "publishedAt" not in pending  # a pending submission never expires

    async def published() -> bool:
        # A date in MongoDB; the nx-27017 stand-in hands a $set date back as a string.
        found = await collection.find_one({"_id": job_id})
        return found is not None and found.get("publishedAt") is not None

    async with app_factory(retention_days=30):
        await wait_until(published)
        assert await ttl_of(collection) == 30 * DAY
    assert [str(job.job_id) for job in await broker.drain_jobs()] == [job_id]


async def test_a_published_submission_or_accepted_batch_past_the_window_goes_a_pending_one_stays(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory(relay_enabled=False):
        pass  # the indexes, at the default week
    batches = collection.database[BATCHES]
    assert await ttl_of(batches, "acceptedAt") == 7 * DAY
    eight, six = datetime.now(UTC) - 8 * DAYS, datetime.now(UTC) - 6 * DAYS
    await collection.insert_many(
        [
            {"_id": "published-8-days-ago", "createdAt": eight, "publishedAt": eight},
            {"_id": "published-6-days-ago", "createdAt": six, "publishedAt": six},
            {"_id": "pending-for-8-days", "createdAt": eight},
        ]
    )
    await batches.insert_many(
        [
            {"_id": "accepted-8-days-ago", "state": "accepted", "acceptedAt": eight},
            {"_id": "accepted-6-days-ago", "state": "accepted", "acceptedAt": six},
            {"_id": "pending-batch-for-8-days", "state": "pending", "createdAtMs": 0},
        ]
    )

    async def expired() -> bool:  # MongoDB's TTL monitor runs every 60 s
        gone = await collection.find_one({"_id": "published-8-days-ago"}) is None
        return gone and await batches.find_one({"_id": "accepted-8-days-ago"}) is None

    await wait_until(expired, timeout=90)
    left = sorted([doc["_id"] async for doc in collection.find({})])
    assert left == ["pending-for-8-days", "published-6-days-ago"]
    left = sorted([doc["_id"] async for doc in batches.find({})])
    assert left == ["accepted-6-days-ago", "pending-batch-for-8-days"]


async def test_an_accepted_batch_carries_its_acceptance_date_and_its_index_follows_the_setting(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    batches = collection.database[BATCHES]
    async with app_factory(retention_days=2) as app:
        job = {"type": "simulate", "priority": 2, "payload": {"minSeconds": 0}}
        answer = await app.submit_batch({"jobs": [job, job]})
        assert answer.status_code == 202, answer.text
        batch = await batches.find_one({"_id": answer.json()["batchId"]})
        assert batch["state"] == "accepted"
        assert batch.get("acceptedAt") is not None  # a date (the stand-in: a string)
        assert await ttl_of(batches, "acceptedAt") == 2 * DAY
    async with app_factory(retention_days=0):
        assert await ttl_of(batches, "acceptedAt") is None
