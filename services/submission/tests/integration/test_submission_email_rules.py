"""Email abuse rules at submission, over real MongoDB: the per-user quota (429 with Retry-After,
counted in one counter document per window, single and batch submissions alike, replays not
counted, admins exempt) and the recipient allow-list (422 naming the field).

The quota's rules are checked both ways it counts (``adapters/quota.py``): in the job's
transaction (a replica set; forced here on the stand-in, one request at a time, which it can
run) and by reservation (what the stand-in and a standalone server get)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from jobs_common.auth import Identity
from jobs_submission.adapters.quota import QUOTAS, QuotaStore
from jobs_submission.service import create_app
from jobs_submission.settings import Settings

from .conftest import ADMIN, EMAIL_JOB, OTHER, TOKEN, USER, announce_builtin_types

pytestmark = pytest.mark.integration

SIMULATE_JOB = {"type": "simulate", "priority": 1, "payload": {"minSeconds": 0, "maxSeconds": 0}}


def email_to(address: str) -> dict[str, Any]:
    return {**EMAIL_JOB, "payload": {**EMAIL_JOB["payload"], "to": address}}


class Client:
    def __init__(self, client: httpx.AsyncClient, quotas: QuotaStore) -> None:
        self.client = client
        self.quotas = quotas

    async def submit(
        self, body: Any = None, *, identity: Identity = USER, key: str | None = None
    ) -> httpx.Response:
        headers = identity.headers(TOKEN) | ({"Idempotency-Key": key} if key else {})
        return await self.client.post(
            "/api/v1/jobs", json=EMAIL_JOB if body is None else body, headers=headers
        )

    async def batch(
        self, jobs: list[dict[str, Any]], *, identity: Identity = USER, key: str | None = None
    ) -> httpx.Response:
        headers = identity.headers(TOKEN) | ({"Idempotency-Key": key} if key else {})
        return await self.client.post("/api/v1/batches", json={"jobs": jobs}, headers=headers)


@asynccontextmanager
async def running(settings: Settings, transactions: bool | None = None) -> AsyncIterator[Client]:
    """The app; ``transactions`` forces how the quota counts (None: as the server allows)."""
    await announce_builtin_types(settings)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        quotas: QuotaStore = app.state.submissions.acceptance.quotas
        assert app.state.batches.acceptance.quotas is quotas
        quotas.transactions = transactions
        async with httpx.AsyncClient(transport=transport, base_url="http://submission") as client:
            yield Client(client, quotas)


@pytest.fixture
def quota_settings(settings_factory: Callable[..., Settings]) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        return settings_factory(relay_enabled=False, **overrides)

    return build


@pytest.fixture(params=[True, False], ids=["in-transaction", "reserved"])
def transactions(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def refused_for_quota(response: httpx.Response, *, window_seconds: int) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert body["error"] == "too_many_requests"
    assert "email quota" in body["message"]
    assert 1 <= int(response.headers["Retry-After"]) <= window_seconds


async def test_a_user_gets_429_past_the_email_quota_and_others_are_not_affected(
    quota_settings: Callable[..., Settings], collection: Any, transactions: bool
) -> None:
    settings = quota_settings(email_quota=2, email_quota_window_seconds=600)
    async with running(settings, transactions) as app:
        for _ in range(2):
            assert (await app.submit()).status_code == 202
        refused = await app.submit()
        refused_for_quota(refused, window_seconds=600)
        # Only email jobs count; other users have their own counters.
        assert (await app.submit(SIMULATE_JOB)).status_code == 202
        assert (await app.submit(identity=OTHER)).status_code == 202
        # Admins are exempt by default.
        for _ in range(3):
            assert (await app.submit(identity=ADMIN)).status_code == 202

        stored = await collection.find({"submittedBy": "user@test.com"}).to_list()
        assert sorted(document["type"] for document in stored) == ["email", "email", "simulate"]
        (counter,) = await app.quotas.collection.find(
            {"_id": {"$regex": "^email:user@test.com:"}}
        ).to_list()
        assert counter["count"] == 2  # the refused job was not counted either
        assert "expiresAt" in counter


async def test_admins_count_when_not_exempt(
    quota_settings: Callable[..., Settings], transactions: bool
) -> None:
    settings = quota_settings(email_quota=1, email_quota_exempt_admins=False)
    async with running(settings, transactions) as app:
        assert (await app.submit(identity=ADMIN)).status_code == 202
        refused_for_quota(await app.submit(identity=ADMIN), window_seconds=3600)


async def test_zero_turns_the_quota_off(quota_settings: Callable[..., Settings]) -> None:
    async with running(quota_settings(email_quota=0)) as app:
        responses = [await app.submit() for _ in range(5)]
        assert {response.status_code for response in responses} == {202}
        assert await app.quotas.collection.find_one({}) is None


async def test_replays_are_answered_and_not_counted(
    quota_settings: Callable[..., Settings], transactions: bool
) -> None:
    async with running(quota_settings(email_quota=1), transactions) as app:
        first = await app.submit(key="k-1")
        assert first.status_code == 202
        replay = await app.submit(key="k-1")
        assert replay.status_code == 202
        assert replay.headers.get("Idempotent-Replayed") == "true"
        assert replay.json()["jobId"] == first.json()["jobId"]
        refused_for_quota(await app.submit(key="k-2"), window_seconds=3600)
        (counter,) = await app.quotas.collection.find({}).to_list()
        assert counter["count"] == 1


async def test_concurrent_submissions_never_pass_the_quota(
    quota_settings: Callable[..., Settings], collection: Any
) -> None:
    """As the stand-in runs it: reserved (it is no replica set, and runs no two transactions
    at once); a replica set's transactions conflict and are run again."""
    async with running(quota_settings(email_quota=5)) as app:
        responses = await asyncio.gather(*(app.submit() for _ in range(12)))
        assert app.quotas.transactions is False
        codes = sorted(response.status_code for response in responses)
        assert codes == [202] * 5 + [429] * 7
        assert len(await collection.find({}, {"_id": 1}).to_list()) == 5
        (counter,) = await app.quotas.collection.find({}).to_list()
        assert counter["count"] == 5


async def test_batch_members_count_like_single_jobs(
    quota_settings: Callable[..., Settings], collection: Any, batches: Any, transactions: bool
) -> None:
    async with running(quota_settings(email_quota=3), transactions) as app:
        accepted = await app.batch([EMAIL_JOB, SIMULATE_JOB, EMAIL_JOB], key="b-1")
        assert accepted.status_code == 202, accepted.text
        # A replay of the batch is not counted again.
        assert (await app.batch([EMAIL_JOB, SIMULATE_JOB, EMAIL_JOB], key="b-1")).json()[
            "batchId"
        ] == accepted.json()["batchId"]
        refused_for_quota(await app.batch([EMAIL_JOB, EMAIL_JOB]), window_seconds=3600)
        assert len(await batches.find({}).to_list()) == 1  # the refused batch left nothing
        assert (await app.submit()).status_code == 202  # the third email of the window
        refused_for_quota(await app.submit(), window_seconds=3600)
        assert len(await collection.find({}, {"_id": 1}).to_list()) == 4


async def test_a_failed_write_gives_its_reservation_back(
    quota_settings: Callable[..., Settings], collection: Any
) -> None:
    async with running(quota_settings(email_quota=3), transactions=False) as app:
        assert (await app.submit(key="k-1")).status_code == 202
        assert (await app.batch([EMAIL_JOB])).status_code == 202
        # A write that fails gives its reservation back (here: an idempotency conflict).
        conflict = await app.submit(email_to("else@example.com"), key="k-1")
        assert conflict.status_code == 409, conflict.text
        assert (await app.submit()).status_code == 202  # the third, not refused
        refused_for_quota(await app.submit(), window_seconds=3600)
        refused_for_quota(await app.batch([EMAIL_JOB]), window_seconds=3600)
        replay = await app.submit(key="k-1")  # refused by the quota, answered as a replay
        assert (replay.status_code, replay.headers.get("Idempotent-Replayed")) == (202, "true")
        (counter,) = await app.quotas.collection.find({}).to_list()
        assert counter["count"] == 3
        assert len(await collection.find({}, {"_id": 1}).to_list()) == 3


async def test_quota_counters_expire_through_a_ttl_index(
    quota_settings: Callable[..., Settings], mongo_db_name: str
) -> None:
    async with running(quota_settings()) as app:
        indexes = await app.quotas.client[mongo_db_name][QUOTAS].index_information()
    ttl = [spec for spec in indexes.values() if spec["key"] == [("expiresAt", 1)]]
    assert len(ttl) == 1 and ttl[0]["expireAfterSeconds"] == 0


async def test_recipients_outside_the_allow_list_are_refused_with_their_field(
    quota_settings: Callable[..., Settings], collection: Any
) -> None:
    settings = quota_settings(email_allowed_recipients="example.org, Boss@Example.com")
    async with running(settings) as app:
        refused = await app.submit(email_to("someone@example.com"))
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"] == "validation_error"
        assert [d["field"] for d in refused.json()["details"]] == ["payload.to"]
        assert (await app.submit(email_to("boss@example.com"))).status_code == 202
        assert (await app.submit(email_to("anyone@EXAMPLE.ORG"))).status_code == 202
        assert (await app.submit(email_to("x@sub.example.org"))).status_code == 422

        batch = await app.batch([email_to("a@example.org"), email_to("b@elsewhere.net")])
        assert batch.status_code == 422, batch.text
        assert [d["field"] for d in batch.json()["details"]] == ["jobs.1.payload.to"]
        assert len(await collection.find({}, {"_id": 1}).to_list()) == 2
