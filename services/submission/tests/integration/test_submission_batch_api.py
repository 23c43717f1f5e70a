"""POST /api/v1/batches and GET /api/v1/batches/{batchId}/status against MongoDB and RabbitMQ."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from jobs_common.mongo import create_client
from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.mongo import SubmissionStore

from .conftest import ADMIN, OTHER, AppFactory, Broker, wait_until

pytestmark = pytest.mark.integration


def spec(i: int = 0, **extra: Any) -> dict[str, Any]:
    return {"type": "simulate", "priority": 1 + i % 3, "payload": {"minSeconds": 0}, **extra}


async def count_sent(collection: Any, expected: int) -> bool:
    return bool(await collection.count_documents({"outbox.state": "sent"}) == expected)


async def test_a_batch_of_1000_is_stored_once_and_relayed_with_its_batch_id(
    app_factory: AppFactory, broker: Broker, collection: Any, batches: Any
) -> None:
    specs = [spec(i, ref=f"r{i}") for i in range(1000)]
    specs[1]["dependsOn"] = ["ref:r0"]
    specs[2]["dependsOn"] = ["ref:r0", "ref:r1"]
    async with app_factory() as app:
        response = await app.submit_batch({"jobs": specs, "name": "nightly"}, key="b-1")
        assert response.status_code == 202, response.text
        answer = response.json()
        assert set(answer) == {"batchId", "jobIds", "status", "idempotencyKey"}
        assert answer["status"] == "accepted"
        batch_id, job_ids = answer["batchId"], answer["jobIds"]
        assert len(job_ids) == 1000 == len(set(job_ids))
        # jobs_common.ids: the time bucket leads, so a batch's ids sort together in an index.
        assert {uuid.UUID(j).version for j in [*job_ids, batch_id]} == {8}
        assert len({j[:2] for j in job_ids}) <= 2 and len({j[:8] for j in job_ids}) > 990

        await wait_until(lambda: count_sent(collection, 1000), timeout=60)
        status = await app.client.get(f"/api/v1/batches/{batch_id}/status", headers=app.headers())
        assert status.status_code == 200
        body = status.json()
        assert body["batchId"] == batch_id and body["name"] == "nightly"
        assert body["size"] == 1000 and body["jobIds"] == job_ids
        assert body["published"] == 1000 and body["createdAt"]

    assert await batches.count_documents({}) == 1
    batch_doc = await batches.find_one({"_id": batch_id})
    assert batch_doc["state"] == "accepted"
    assert batch_doc["size"] == 1000 and batch_doc["jobIds"] == job_ids
    assert batch_doc["idempotencyKey"] == "b-1" and len(batch_doc["requestHash"]) == 64
    assert batch_doc["submittedBy"] == "user@test.com"
    assert await collection.count_documents({"batchId": batch_id, "batchSize": 1000}) == 1000

    messages = []
    async with asyncio.timeout(30):
        while len(messages) < 1000:
            messages.extend(await broker.drain_jobs())
    assert len(messages) == 1000
    assert {str(m.batch_id) for m in messages} == {batch_id}
    assert {m.batch_size for m in messages} == {1000}
    by_id = {str(m.job_id): m for m in messages}
    assert set(by_id) == set(job_ids)
    assert by_id[job_ids[0]].depends_on == []
    assert [str(p) for p in by_id[job_ids[1]].depends_on] == [job_ids[0]]
    assert [str(p) for p in by_id[job_ids[2]].depends_on] == [job_ids[0], job_ids[1]]
    assert by_id[job_ids[5]].priority == 3


async def test_a_batch_with_a_cycle_or_a_foreign_parent_stores_nothing(
    app_factory: AppFactory, collection: Any, batches: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        theirs = (await app.submit(identity=OTHER)).json()["jobId"]
        cycle = await app.submit_batch(
            {
                "jobs": [
                    spec(ref="a", dependsOn=["ref:b"]),
                    spec(ref="b", dependsOn=["ref:a"]),
                    spec(ref="c", dependsOn=["ref:a", theirs]),
                    spec(priority=9),
                ]
            }
        )
        assert cycle.status_code == 422
        details = {d["field"]: d["message"] for d in cycle.json()["details"]}
        assert details == {
            "jobs.0.dependsOn": "dependency cycle among jobs.0, jobs.1",
            "jobs.1.dependsOn": "dependency cycle among jobs.0, jobs.1",
            "jobs.3.priority": "Input should be less than or equal to 3",
        }
        foreign = await app.submit_batch({"jobs": [spec(), spec(dependsOn=[theirs])]})
        assert foreign.status_code == 422
        assert foreign.json()["details"] == [
            {"field": "jobs.1.dependsOn.0", "message": "unknown job"}
        ]
        forbidden = await app.submit_batch({"jobs": [spec()], "submittedBy": "other@test.com"})
        assert forbidden.status_code == 403
    assert await batches.count_documents({}) == 0
    assert await collection.count_documents({}) == 1  # only OTHER's own job


async def test_batch_replay_and_conflict(
    app_factory: AppFactory, collection: Any, batches: Any
) -> None:
    body = {"jobs": [spec(i) for i in range(20)], "name": "again"}
    async with app_factory(relay_enabled=False) as app:
        first = await app.submit_batch(body, key="k")
        assert first.status_code == 202
        assert first.json()["idempotencyKey"] == "k"
        replays = await asyncio.gather(*(app.submit_batch(body, key="k") for _ in range(5)))
        for replay in replays:
            assert replay.status_code == 202
            assert replay.json() == first.json()
            assert replay.headers["Idempotent-Replayed"] == "true"
        other = await app.submit_batch({**body, "name": "changed"}, key="k")
        assert other.status_code == 409
        # the key is per owner, and batch keys do not collide with single-job keys
        assert (await app.submit_batch(body, key="k", identity=OTHER)).status_code == 202
        assert (await app.submit(key="k")).status_code == 202
    assert await batches.count_documents({}) == 2
    assert await collection.count_documents({"batchId": {"$type": "string"}}) == 40


async def crashed_while_storing(
    app_factory: AppFactory, collection: Any, batches: Any, *, stored: int, key: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A batch of 10 as a request leaves it that died after inserting ``stored`` members
    (before its flip): the batch pending, its members pending under a claim that ran out.
    Returns the request body and the first answer."""
    body = {"jobs": [spec(i) for i in range(10)]}
    async with app_factory(relay_enabled=False) as app:
        answer = (await app.submit_batch(body, key=key)).json()
    await batches.update_one({"_id": answer["batchId"]}, {"$set": {"state": "pending"}})
    await collection.delete_many({"_id": {"$in": answer["jobIds"][stored:]}})
    await collection.update_many(
        {"batchId": answer["batchId"]},
        {"$set": {"outbox.claimToken": "died", "outbox.claimedUntilMs": 1}},
    )
    return body, answer


async def test_members_of_a_pending_batch_are_not_published_and_a_replay_completes_it(
    app_factory: AppFactory, broker: Broker, collection: Any, batches: Any
) -> None:
    body, answer = await crashed_while_storing(
        app_factory, collection, batches, stored=4, key="crash"
    )
    batch_id, job_ids = answer["batchId"], answer["jobIds"]

    async def given_back() -> bool:
        # each relay pass that claims them finds the batch pending and gives them back later
        waiting = {"batchId": batch_id, "outbox.attempts": {"$gte": 1}}
        return bool(await collection.count_documents(waiting) == 4)

    async with app_factory() as app:
        await wait_until(given_back)
        hidden = await app.client.get(f"/api/v1/batches/{batch_id}/status", headers=app.headers())
        assert hidden.status_code == 404
        assert await broker.drain_submitted() == []
        client = create_client(app.settings.mongo_url)
        try:
            store = SubmissionStore(client, app.settings.mongo_db)
            assert await store.projects_of(job_ids) == {}  # cannot be parents yet
        finally:
            await client.close()
        member = await collection.find_one({"_id": job_ids[0]})
        assert member["outbox"]["state"] == "pending"
        assert member["outbox"]["lastError"] == "the batch is not accepted yet"

        resumed = await app.submit_batch(body, key="crash")
        assert resumed.status_code == 202
        assert resumed.json() == answer
        await wait_until(lambda: count_sent(collection, 10))
        status = await app.client.get(f"/api/v1/batches/{batch_id}/status", headers=app.headers())
        assert status.json()["published"] == 10
    messages = await broker.drain_jobs()
    assert sorted(str(m.job_id) for m in messages) == sorted(job_ids)
    assert (await batches.find_one({"_id": batch_id}))["state"] == "accepted"


async def test_a_replay_leaves_members_another_relay_claims_now_to_that_relay(
    app_factory: AppFactory, collection: Any, batches: Any
) -> None:
    """Reopening a resumed batch takes no live claim: the relay holding it publishes those
    members (it sees the batch accepted) or gives them back; taking them over could publish
    them twice."""
    body, answer = await crashed_while_storing(
        app_factory, collection, batches, stored=4, key="busy"
    )
    stored = answer["jobIds"][:4]
    await collection.update_many(
        {"_id": {"$in": stored}},
        {"$set": {"outbox.claimToken": "another-relay", "outbox.claimedUntilMs": 2**53}},
    )
    async with app_factory(relay_enabled=False) as app:
        resumed = await app.submit_batch(body, key="busy")
        assert resumed.status_code == 202 and resumed.json() == answer
    members = {m["_id"]: m["outbox"] async for m in collection.find({"batchId": answer["batchId"]})}
    assert len(members) == 10
    assert {members[i]["claimToken"] for i in stored} == {"another-relay"}
    assert {members[i]["claimToken"] for i in answer["jobIds"][4:]} == {None}  # due now
    assert {members[i]["state"] for i in members} == {"pending"}


async def test_an_abandoned_batch_is_held_back_until_a_replay_reopens_it(
    app_factory: AppFactory, broker: Broker, collection: Any, batches: Any
) -> None:
    body, answer = await crashed_while_storing(
        app_factory, collection, batches, stored=10, key="old"
    )
    batch_id = answer["batchId"]
    await batches.update_one({"_id": batch_id}, {"$set": {"createdAtMs": 1}})  # long ago

    async def held() -> bool:
        return bool(await collection.count_documents({"outbox.state": "held"}) == 10)

    async with app_factory(relay_abandoned_batch_seconds=60) as app:
        await wait_until(held)
        assert await broker.drain_submitted() == []
        resumed = await app.submit_batch(body, key="old")
        assert resumed.status_code == 202 and resumed.json() == answer
        await wait_until(lambda: count_sent(collection, 10))
    assert sorted(str(m.job_id) for m in await broker.drain_jobs()) == sorted(answer["jobIds"])


async def test_members_whose_batch_document_is_gone_are_deleted_not_published(
    app_factory: AppFactory, broker: Broker, collection: Any, batches: Any
) -> None:
    _, answer = await crashed_while_storing(app_factory, collection, batches, stored=6, key=None)
    await batches.delete_one({"_id": answer["batchId"]})  # the undo deleted it, then died

    async def dropped() -> bool:
        return bool(await collection.count_documents({"batchId": answer["batchId"]}) == 0)

    async with app_factory() as app:
        single = (await app.submit()).json()["jobId"]
        await wait_until(dropped)
        await wait_until(lambda: count_sent(collection, 1))
    assert [str(m.job_id) for m in await broker.drain_jobs()] == [single]


async def test_a_failed_batch_without_a_key_is_undone_but_an_accepted_one_is_kept(
    app_factory: AppFactory, collection: Any, batches: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        accepted = (await app.submit_batch({"jobs": [spec(i) for i in range(3)]})).json()
        pending = (await app.submit_batch({"jobs": [spec(i) for i in range(4)]})).json()
    await batches.update_one({"_id": pending["batchId"]}, {"$set": {"state": "pending"}})
    client = create_client(app.settings.mongo_url)
    try:
        store = BatchStore(SubmissionStore(client, app.settings.mongo_db))
        await store.discard(pending["batchId"])
        await store.discard(accepted["batchId"])  # accepted: not undone
    finally:
        await client.close()
    assert await batches.find_one({"_id": pending["batchId"]}) is None
    assert await collection.count_documents({"batchId": pending["batchId"]}) == 0
    assert await collection.count_documents({"batchId": accepted["batchId"]}) == 3
    assert await batches.find_one({"_id": accepted["batchId"]}) is not None


async def test_batch_status_is_for_the_owner_or_an_admin(app_factory: AppFactory) -> None:
    async with app_factory(relay_enabled=False) as app:
        batch_id = (await app.submit_batch({"jobs": [spec()]})).json()["batchId"]

        async def status(who: Any, target: str = batch_id) -> int:
            url = f"/api/v1/batches/{target}/status"
            return (await app.client.get(url, headers=app.headers(who))).status_code

        assert await status(OTHER) == 404
        assert await status(ADMIN) == 200
        assert await status(ADMIN, str(uuid.uuid4())) == 404
        answer = await app.client.get(f"/api/v1/batches/{batch_id}/status", headers=app.headers())
        assert answer.json()["published"] == 0
