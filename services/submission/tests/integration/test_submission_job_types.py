"""The job type registry: types announced by workers on jobs.types are listed, validate
submissions with their JSON Schema (422 with field paths), give their defaults, survive a
restart of the service, and an older announcement never brings back a replaced schema."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import aio_pika
import httpx
import pytest

from jobs_common.contracts import JobTypeInfo, WorkerTypes, utcnow
from jobs_common.topology import JOBS_EXCHANGE, TYPES
from jobs_testing.builtin_types import builtin_announcement, builtin_types

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
        detail = refused.json()["details"][0]
        assert detail["field"] == "type"
        assert detail["message"].startswith(
            "unknown job type 'acme.reverse': no worker has announced it yet"
        )
        assert "known types: email, image_resize" in detail["message"]

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
        assert set(fields) == {"payload.text", "payload.extra"}  # too long; extra property

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
        assert builtin.json()["payload"]["minSeconds"] == 1.0  # its schema's defaults filled in
        assert builtin.json()["maxAttempts"] == 3  # its handler's, as announced

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


async def test_a_builtin_type_is_refused_until_a_worker_announces_it_then_checked_by_its_schema(
    app_factory: AppFactory, broker: Broker, collection: Any
) -> None:
    """The built-in types are ordinary handlers: known once a worker announced them, their
    payloads checked against the schema announced (a newer one replaces it), and the
    registry keeps them across a restart."""
    quick = {"type": "simulate", "priority": 2, "payload": {"minSeconds": 0, "maxSeconds": 2}}
    async with app_factory(announce_builtins=False) as app:
        refused = await app.submit(quick)
        assert refused.status_code == 422, refused.text
        assert refused.json()["details"] == [
            {
                "field": "type",
                "message": "unknown job type 'simulate': no worker has announced it yet "
                "(start a worker that serves it); known types: none yet",
            }
        ]
        batch = await app.submit_batch({"jobs": [quick]})
        assert batch.status_code == 422
        assert batch.json()["details"][0]["field"] == "jobs.0.type"

        await announce(broker, builtin_announcement())
        accepted = await wait_for_status(app, quick, 202)
        stored = await collection.find_one({"_id": accepted.json()["jobId"]})
        assert stored["payload"] == {
            **quick["payload"],
            "immediateFailureRate": 0.0,
            "failureRate": 0.0,
            "seed": None,
        }
        assert (stored["maxAttempts"], stored["timeoutSeconds"]) == (3, 300)  # the handler's
        crlf = {"to": "a@example.com", "subject": "hi\r\nBcc: b@example.com", "body": "b"}
        header = await app.submit({"type": "email", "priority": 2, "payload": crlf})
        assert header.status_code == 422
        assert header.json()["details"] == [
            {
                "field": "payload.subject",
                "message": "must not contain control characters or line breaks",
            }
        ]

        # A newer handler that allows at most 1 second: its schema is the one checked now.
        (simulate,) = [t for t in builtin_types() if t.job_type == "simulate"]
        stricter = copy.deepcopy(simulate.payload_schema)
        stricter["properties"]["maxSeconds"]["maximum"] = 1
        newer = WorkerTypes(
            worker_id="w-new",
            types=[simulate.model_copy(update={"payload_schema": stricter})],
            sent_at=utcnow() + timedelta(seconds=1),
        )
        await announce(broker, newer)
        too_long = await wait_for_status(app, quick, 422)
        assert [d["field"] for d in too_long.json()["details"]] == ["payload.maxSeconds"]

    async with app_factory(announce_builtins=False) as restarted:  # kept in MongoDB
        kept = {**quick, "payload": {"maxSeconds": 1}}
        assert (await restarted.submit(kept)).status_code == 202


async def wait_for_status(app: RunningApp, body: dict[str, Any], status: int) -> httpx.Response:
    """Submit ``body`` until the answer is ``status`` (an announcement is consumed a moment
    after it is published)."""
    answers: list[httpx.Response] = []

    async def answered() -> bool:
        answers.append(await app.submit(body))
        return answers[-1].status_code == status

    await wait_until(answered)
    return answers[-1]
