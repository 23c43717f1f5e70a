from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from jobs_common.contracts import JobsSubmitted
from jobs_common.mongo import create_client
from jobs_common.topology import SUBMITTED, declare_topology
from jobs_submission.adapters.mongo import SubmissionStore
from jobs_submission.adapters.rabbit import BusHolder
from jobs_submission.app.relay import OutboxRelay
from jobs_submission.settings import Settings
from jobs_testing.plugin import RabbitServer

from .conftest import EMAIL_JOB, OTHER, USER, AppFactory, Broker, wait_until

pytestmark = pytest.mark.integration


def job_ids(messages: list[Any]) -> list[str]:
    return [str(j.job_id) for m in messages for j in JobsSubmitted.model_validate_json(m.body).jobs]


async def all_published(collection: Any) -> bool:
    remaining: int = await collection.count_documents({"status": {"$ne": "published"}})
    return remaining == 0


async def test_jobs_accepted_without_a_relay_are_published_later_once(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        responses = [await app.submit(key=f"k{i}") for i in range(10)]
        accepted = {r.json()["jobId"] for r in responses}
        assert len(accepted) == 10
        assert await broker.drain_submitted() == []
        assert await collection.count_documents({"outbox.state": "pending"}) == 10

    async with app_factory(relay_batch_size=3) as app:
        await wait_until(lambda: all_published(collection))
    ids = job_ids(await broker.drain_submitted())
    assert sorted(ids) == sorted(accepted)
    assert await collection.count_documents({"outbox.state": "sent"}) == 10


async def test_a_relay_pass_packs_its_jobs_into_few_messages(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        accepted = [(await app.submit(key=f"p{i}")).json()["jobId"] for i in range(10)]
    async with app_factory(relay_batch_size=10, relay_jobs_per_message=4):
        await wait_until(lambda: all_published(collection))
    messages = await broker.drain_submitted()
    jobs = [JobsSubmitted.model_validate_json(m.body).jobs for m in messages]
    assert [len(group) for group in jobs] == [4, 4, 2]  # one pass, three messages
    assert sorted(str(job.job_id) for group in jobs for job in group) == sorted(accepted)


async def test_an_expired_claim_of_a_crashed_relay_is_taken_over(
    app_factory: AppFactory,
    broker: Broker,
    collection: Any,
    settings_factory: Callable[..., Settings],
) -> None:
    async with app_factory(relay_enabled=False) as app:
        job_id = (await app.submit()).json()["jobId"]

    settings = settings_factory(relay_claim_lease_seconds=30)
    client = create_client(settings.mongo_url)
    bus = BusHolder(settings.amqp_url, name="submission-test")
    try:
        store = SubmissionStore(client, settings.mongo_db)
        doc = await collection.find_one({"_id": job_id})
        start = doc["outbox"]["nextAttemptAtMs"]
        # a relay claims the entry, then "crashes" before publishing
        crashed = await store.claim(token="crashed", now_ms=start, lease_ms=30_000, limit=10)
        assert [d["_id"] for d in crashed] == [job_id]

        now = {"ms": start + 1_000}
        relay = OutboxRelay(store=store, bus=bus, settings=settings, clock=lambda: now["ms"])
        publisher = (await bus.get()).publisher
        assert await relay.run_once(publisher) == 0  # the lease still holds
        assert await broker.drain_submitted() == []

        now["ms"] = start + 30_001  # the lease expired
        assert await relay.run_once(publisher) == 1
        assert job_ids(await broker.drain_submitted()) == [job_id]
        doc = await collection.find_one({"_id": job_id})
        assert doc["status"] == "published"
        assert doc["outbox"]["state"] == "sent"
        assert doc["publishedAtMs"] == start + 30_001

        # the crashed relay comes back: its token no longer marks or releases anything
        assert not await store.mark_sent([job_id], token="crashed", now_ms=now["ms"])
        assert not await store.release(job_id, token="crashed", next_attempt_ms=0, error="x")
        assert await relay.run_once(publisher) == 0
        assert await broker.drain_submitted() == []
    finally:
        await bus.close()
        await client.close()


async def test_api_accepts_while_the_broker_is_down_and_relay_catches_up(
    app_factory: AppFactory, rabbit_server: RabbitServer, collection: Any
) -> None:
    vhost = f"test-late-{uuid.uuid4().hex[:10]}"
    url = rabbit_server.url_for(vhost)
    try:
        async with app_factory(amqp_url=url) as app:
            ready = await app.client.get("/ready")
            assert ready.status_code == 503
            assert ready.json()["checks"]["broker"] is False
            assert (await app.submit()).status_code == 202
            assert (await app.submit(identity=OTHER)).status_code == 202

            # the broker "comes back": the vhost appears
            await rabbit_server.management("PUT", f"/vhosts/{quote(vhost, safe='')}")
            await rabbit_server.management(
                "PUT",
                f"/permissions/{quote(vhost, safe='')}/guest",
                json={"configure": ".*", "write": ".*", "read": ".*"},
            )
            await wait_until(lambda: all_published(collection))
            assert (await app.client.get("/ready")).status_code == 200
        broker = await _broker(url)
        try:
            assert len(await broker.drain_jobs()) == 2
        finally:
            await broker.connection.close()
    finally:
        await rabbit_server.delete_vhost(vhost)


async def _broker(url: str) -> Broker:
    import aio_pika

    connection = await aio_pika.connect_robust(url)
    channel = await connection.channel()
    await declare_topology(channel)
    return Broker(connection, channel)


async def test_a_returned_publish_stays_pending_and_is_retried(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory() as app:
        await broker.channel.queue_delete(SUBMITTED)  # jobs.submitted is now unroutable
        job_id = (await app.submit()).json()["jobId"]

        async def failed_once() -> bool:
            doc = await collection.find_one({"_id": job_id})
            return bool(doc["outbox"]["attempts"] >= 1 and doc["outbox"]["lastError"])

        await wait_until(failed_once)
        doc = await collection.find_one({"_id": job_id})
        assert doc["status"] == "accepted"
        assert doc["outbox"]["state"] == "pending"

        await declare_topology(broker.channel)  # the queue is back
        await wait_until(lambda: all_published(collection))
        doc = await collection.find_one({"_id": job_id})
        assert doc["outbox"]["lastError"] is None
    assert job_ids(await broker.drain_submitted()) == [job_id]


async def test_two_replicas_publish_every_job_once(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory(relay_batch_size=5) as one, app_factory(relay_batch_size=5) as two:
        responses = await asyncio.gather(
            *(
                (one if i % 2 else two).submit({**EMAIL_JOB, "priority": 1 + i % 3}, identity=USER)
                for i in range(40)
            )
        )
        accepted = sorted(r.json()["jobId"] for r in responses)
        await wait_until(lambda: all_published(collection))
    assert sorted(job_ids(await broker.drain_submitted())) == accepted
