"""Accepted submissions go to this process's relay in memory, already claimed: published
without a claim round trip; if the process dies first, the claim expires and any relay
publishes them the ordinary way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from jobs_common.contracts import utcnow
from jobs_common.mongo import create_client
from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.mongo import SubmissionStore
from jobs_submission.adapters.rabbit import BusHolder
from jobs_submission.app.acceptance import Acceptance
from jobs_submission.app.batches import BatchService
from jobs_submission.app.handoff import HandOff
from jobs_submission.app.relay import OutboxRelay
from jobs_submission.app.submissions import SubmissionService
from jobs_submission.domain.times import to_ms
from jobs_submission.settings import Settings

from .conftest import EMAIL_JOB, USER, Broker, BuiltinTypes

pytestmark = pytest.mark.integration

LEASE_S = 30


class Parts:
    def __init__(self, settings: Settings, store: SubmissionStore, bus: BusHolder) -> None:
        self.settings, self.store, self.bus = settings, store, bus
        self.now: datetime = utcnow()
        self.relay = OutboxRelay(
            store=store, bus=bus, settings=settings, clock=lambda: to_ms(self.now)
        )

    def submissions(self, handoff: HandOff) -> SubmissionService:
        return SubmissionService(
            self.store, Acceptance(types=BuiltinTypes(), handoff=handoff, clock=lambda: self.now)
        )

    async def run_once(self) -> int:
        return await self.relay.run_once((await self.bus.get()).publisher)


@pytest.fixture
async def parts(settings_factory: Callable[..., Settings]) -> AsyncIterator[Parts]:
    settings = settings_factory(relay_claim_lease_seconds=LEASE_S)
    client = create_client(settings.mongo_url)
    bus = BusHolder(settings.amqp_url, name="submission-test")
    store = SubmissionStore(client, settings.mongo_db)
    await store.ensure_indexes()
    try:
        yield Parts(settings, store, bus)
    finally:
        await bus.close()
        await client.close()


async def submit(service: SubmissionService) -> str:
    accepted = await service.submit(EMAIL_JOB, identity=USER, idempotency_key=None, trace_id="t")
    return accepted.job_id


async def test_a_handed_over_submission_is_published_within_its_claim(
    parts: Parts, broker: Broker, collection: Any
) -> None:
    job_id = await submit(parts.submissions(parts.relay.handoff))
    doc = await collection.find_one({"_id": job_id})
    assert doc["outbox"]["claimToken"] == parts.relay.handoff.token
    assert doc["outbox"]["claimedUntilMs"] == to_ms(parts.now) + LEASE_S * 1000
    # Still claimed, so no ordinary claim could take it: it came from the hand-off.
    assert await parts.run_once() == 1
    assert [str(j.job_id) for j in await broker.drain_jobs()] == [job_id]
    assert (await collection.find_one({"_id": job_id}))["outbox"]["state"] == "sent"
    assert await parts.run_once() == 0


async def test_a_hand_off_lost_with_its_process_is_published_after_the_lease(
    parts: Parts, broker: Broker
) -> None:
    dead_process = HandOff(lease_ms=LEASE_S * 1000, wake=lambda: None)  # never taken
    job_id = await submit(parts.submissions(dead_process))
    assert await parts.run_once() == 0  # claimed by the dead process's token
    assert await broker.drain_jobs() == []
    parts.now += timedelta(seconds=LEASE_S + 1)
    assert await parts.run_once() == 1
    assert [str(j.job_id) for j in await broker.drain_jobs()] == [job_id]


async def test_a_hand_off_whose_claim_ran_out_is_left_to_the_ordinary_claim(
    parts: Parts, broker: Broker
) -> None:
    job_id = await submit(parts.submissions(parts.relay.handoff))
    parts.now += timedelta(seconds=LEASE_S + 1)  # the relay got to it too late
    assert await parts.run_once() == 1  # claimed anew, under the pass's own token
    assert len(parts.relay.handoff) == 0
    assert [str(j.job_id) for j in await broker.drain_jobs()] == [job_id]


async def test_a_batch_is_handed_over_whole(parts: Parts, broker: Broker) -> None:
    service = BatchService(
        parts.store,
        BatchStore(parts.store),
        Acceptance(types=BuiltinTypes(), handoff=parts.relay.handoff, clock=lambda: parts.now),
    )
    await service.batches.ensure_indexes()
    specs = [EMAIL_JOB | {"priority": 1 + i % 3} for i in range(30)]
    accepted = await service.submit(
        {"jobs": specs}, identity=USER, idempotency_key=None, trace_id="t"
    )
    assert await parts.run_once() == 30  # within the claim: the hand-off
    assert sorted(str(j.job_id) for j in await broker.drain_jobs()) == sorted(accepted.job_ids)
