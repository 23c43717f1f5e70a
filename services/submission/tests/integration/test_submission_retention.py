"""Submission documents expire through a TTL index on ``publishedAt``, accepted batches on
``acceptedAt`` (docs/operations.md, "Retention"): the service builds them from
SUBMISSION_RETENTION_DAYS at start, changes them in place when the setting changes, drops them
at 0; a document gets ``publishedAt`` only once its publish was confirmed, so a pending one
never expires. MongoDB (its TTL monitor) deletes; on a server without one (the nx-27017
stand-in) the service builds no TTL index and deletes the same documents itself, every minute
(app/expiry.py). The tests say which path the server they ran on took."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobs_common.mongo import create_client
from jobs_submission.adapters.mongo import BATCHES, SubmissionStore, has_ttl_monitor

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
        await store.ensure_indexes(timedelta(days=7))
        await store.ensure_indexes(timedelta(days=7), ttl_monitor=False)  # the service expires
        assert await ttl_of(collection) is None
    finally:
        await client.close()


async def ttl_expected(collection: Any, days: float) -> int | None:
    """The TTL index the service builds on this server: none where it expires documents."""
    return int(days * DAY) if await has_ttl_monitor(collection.database) else None


async def test_only_a_published_submission_can_expire(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:  # nothing is published
        assert await ttl_of(collection) == await ttl_expected(collection, 7)  # a week
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
        assert await ttl_of(collection) == await ttl_expected(collection, 30)
    assert [str(job.job_id) for job in await broker.drain_jobs()] == [job_id]


async def test_a_published_submission_or_accepted_batch_past_the_window_goes_a_pending_one_stays(
    app_factory: AppFactory, collection: Any
) -> None:
    batches = collection.database[BATCHES]
    eight, six = datetime.now(UTC) - 8 * DAYS, datetime.now(UTC) - 6 * DAYS
    published = {"outbox": {"state": "sent"}}
    await collection.insert_many(
        [
            {"_id": "published-8-days-ago", **published, **times("published", eight)},
            {"_id": "published-6-days-ago", **published, **times("published", six)},
            {"_id": "pending-for-8-days", "createdAt": eight, "outbox": {"state": "pending"}},
        ]
    )
    await batches.insert_many(
        [
            {"_id": "accepted-8-days-ago", "state": "accepted", **times("accepted", eight)},
            {"_id": "accepted-6-days-ago", "state": "accepted", **times("accepted", six)},
            {"_id": "pending-batch-for-8-days", "state": "pending", "createdAtMs": 0},
        ]
    )

    async def expired() -> bool:  # the service at its start (the stand-in), or MongoDB (60 s)
        gone = await collection.find_one({"_id": "published-8-days-ago"}) is None
        return gone and await batches.find_one({"_id": "accepted-8-days-ago"}) is None

    async with app_factory(relay_enabled=False):  # the indexes, or the expiry, at a week
        assert await ttl_of(batches, "acceptedAt") == await ttl_expected(collection, 7)
        await wait_until(expired, timeout=90)
    left = sorted([doc["_id"] async for doc in collection.find({})])
    assert left == ["pending-for-8-days", "published-6-days-ago"]
    left = sorted([doc["_id"] async for doc in batches.find({})])
    assert left == ["accepted-6-days-ago", "pending-batch-for-8-days"]


def times(event: str, at: datetime) -> dict[str, Any]:
    """``<event>At`` (what a TTL index reads) and ``<event>AtMs`` (what the service reads)."""
    return {f"{event}At": at, f"{event}AtMs": int(at.timestamp() * 1000)}


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
        assert await ttl_of(batches, "acceptedAt") == await ttl_expected(collection, 2)
    async with app_factory(retention_days=0):
        assert await ttl_of(batches, "acceptedAt") is None
