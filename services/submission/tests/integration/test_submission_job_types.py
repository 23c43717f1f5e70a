"""The job type registry: types announced by workers on jobs.types are listed, validate
submissions with their JSON Schema (422 with field paths), give their defaults, survive a
restart of the service, and an older announcement never brings back a replaced schema."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import aio_pika
import httpx
import pytest

from jobs_common.contracts import JobTypeInfo, WorkerTypes, utcnow
from jobs_common.topology import JOBS_EXCHANGE, TYPES

from .conftest import AppFactory, Broker, RunningApp, wait_until

pytestmark = pytest.mark.integration

REVERSE_V1: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": 20}},
    "required": ["text"],
    "additionalProperties": False,
}
REVERSE_V2: dict[str, Any] = {
    "type": "object",
    "properties": {"words": {"type": "array", "items": {"type": "string"}}},
    "required": ["words"],
}


def announcement(
    schema: dict[str, Any], *, worker: str = "w1", leaving: bool = False, ago: float = 0
) -> WorkerTypes:
    return WorkerTypes(
        worker_id=worker,
        types=[
            JobTypeInfo(
                job_type="acme.reverse",
                payload_schema=schema,
                timeout_seconds=30,
                max_attempts=5,
                queue="default",
                slots=2,
            )
        ],
        sent_at=utcnow() - timedelta(seconds=ago),
        leaving=leaving,
    )


async def announce(broker: Broker, message: WorkerTypes) -> None:
    exchange = await broker.channel.get_exchange(JOBS_EXCHANGE)
    await exchange.publish(aio_pika.Message(body=message.to_json()), routing_key=TYPES)


async def reverse_type(app: RunningApp) -> dict[str, Any] | None:
    answer = await app.client.get("/api/v1/job-types", headers=app.headers())
    assert answer.status_code == 200
    return next((t for t in answer.json()["types"] if t["type"] == "acme.reverse"), None)


async def submit_reverse(app: RunningApp, payload: dict[str, Any]) -> httpx.Response:
    return await app.submit({"type": "acme.reverse", "priority": 2, "payload": payload})


async def test_an_announced_type_is_listed_validated_and_given_its_defaults(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    async with app_factory(worker_types_interval_seconds=30) as app:
        refused = await submit_reverse(app, {"text": "abc"})
        assert refused.status_code == 422  # not known yet: the known types are listed
        assert "unknown job type; expected one of: email, image_resize" in refused.text

        await announce(broker, announcement(REVERSE_V1))
        await wait_until(lambda: _listed(app))
        health = (await app.client.get("/health")).json()  # consuming: its task is done
        assert health["status"] == "ok", health
        listed = await reverse_type(app)
        assert listed is not None
        assert (listed["builtin"], listed["queue"], listed["slots"]) == (False, "default", 2)
        assert (listed["timeoutSeconds"], listed["maxAttempts"], listed["liveWorkers"]) == (
            30,
            5,
            1,
        )
        assert listed["payloadSchema"] == REVERSE_V1
        assert listed["waitingReason"] is None  # a worker serves it
        assert listed["announcedAt"].endswith(("Z", "+00:00"))  # with its offset

        accepted = await submit_reverse(app, {"text": "abc"})
        assert accepted.status_code == 202
        stored = await collection.find_one({"_id": accepted.json()["jobId"]})
        assert (stored["maxAttempts"], stored["timeoutSeconds"]) == (5, 30)

        invalid = await submit_reverse(app, {"text": "x" * 21, "extra": 1})
        assert invalid.status_code == 422
        fields = {d["field"]: d["message"] for d in invalid.json()["details"]}
        assert "payload.text" in fields and "payload" in fields  # too long; extra property

        batch = await app.submit_batch(
            {"jobs": [{"type": "acme.reverse", "priority": 1, "payload": {"text": 7}}]}
        )
        assert batch.status_code == 422
        assert batch.json()["details"][0]["field"] == "jobs.0.payload.text"

        await announce(broker, announcement(REVERSE_V1, leaving=True))
        await wait_until(lambda: _live(app, 0))  # no live worker: still a known type
        gone = await reverse_type(app)
        assert gone is not None
        assert gone["waitingReason"] == "no live worker serves 'acme.reverse'"
        assert (await submit_reverse(app, {"text": "still"})).status_code == 202

    async with app_factory() as restarted:  # the registry is in MongoDB
        assert (await submit_reverse(restarted, {"text": "after"})).status_code == 202


async def test_an_older_announcement_never_brings_back_a_replaced_schema(
    app_factory: AppFactory, broker: Broker
) -> None:
    async with app_factory() as app:
        await announce(broker, announcement(REVERSE_V2))
        await wait_until(lambda: _listed(app))
        await announce(broker, announcement(REVERSE_V1, worker="w-old", ago=60))
        await announce(broker, announcement(REVERSE_V2, worker="w-new"))
        await wait_until(lambda: _live(app, 3))
        listed = await reverse_type(app)
        assert listed is not None and listed["payloadSchema"] == REVERSE_V2
        assert (await submit_reverse(app, {"words": ["a", "b"]})).status_code == 202
        assert (await submit_reverse(app, {"text": "old shape"})).status_code == 422


async def _listed(app: RunningApp) -> bool:
    return await reverse_type(app) is not None


async def _live(app: RunningApp, count: int) -> bool:
    listed = await reverse_type(app)
    return listed is not None and listed["liveWorkers"] == count


async def test_a_payload_is_checked_for_its_type_and_nothing_is_stored(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    """``POST /internal/v1/job-types/{type}/check``: the dashboard's check of a schedule template
    or an edited requeue, by the rule a submission meets; it stores nothing."""
    async with app_factory(worker_types_interval_seconds=30) as app:
        await announce(broker, announcement(REVERSE_V1))
        await wait_until(lambda: _listed(app))

        async def check(job_type: str, body: Any, **headers: str) -> httpx.Response:
            return await app.client.post(
                f"/internal/v1/job-types/{job_type}/check",
                content=body if isinstance(body, bytes) else None,
                json=None if isinstance(body, bytes) else body,
                headers=headers or app.headers(),
            )

        good = await check("acme.reverse", {"payload": {"text": "abc"}})
        assert good.status_code == 200, good.text
        assert good.json() == {
            "type": "acme.reverse",
            "payload": {"text": "abc"},
            "queue": "default",
            "timeoutSeconds": 30,
            "maxAttempts": 5,
        }
        builtin = await check("simulate", {"payload": {}})
        assert builtin.status_code == 200
        assert builtin.json()["payload"]["minSeconds"] == 1.0  # its model filled in the defaults
        assert builtin.json()["maxAttempts"] is None  # the platform's default

        bad = await check("acme.reverse", {"payload": {"text": "x" * 21}})
        assert bad.status_code == 422
        assert [d["field"] for d in bad.json()["details"]] == ["payload.text"]
        unknown = await check("acme.nope", {"payload": {}})
        assert unknown.status_code == 422
        assert unknown.json()["details"][0]["field"] == "type"
        assert "acme.reverse" in unknown.json()["details"][0]["message"]
        assert (await check("acme.reverse", {"payload": 3})).status_code == 422
        assert (await check("acme.reverse", b"{not json")).status_code == 400
        anonymous = await check("acme.reverse", {"payload": {}}, accept="application/json")
        assert anonymous.status_code == 401
        assert await collection.count_documents({}) == 0
