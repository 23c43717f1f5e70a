"""Confirmed publishes are marked sent together: one MongoDB write for the entries of many
relay passes, at most ``relay_settle_interval_seconds`` after their confirms, and whatever is
still queued when the relay stops."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from jobs_common.mongo import create_client
from jobs_submission.adapters.mongo import SubmissionStore
from jobs_submission.adapters.rabbit import BusHolder
from jobs_submission.app.acceptance import Acceptance
from jobs_submission.app.relay import OutboxRelay
from jobs_submission.app.submissions import SubmissionService
from jobs_submission.settings import Settings

from .conftest import EMAIL_JOB, USER, Broker, BuiltinTypes, wait_until

pytestmark = pytest.mark.integration


class CountingStore(SubmissionStore):
    """The real store, recording each ``mark_sent`` write it makes."""

    writes: list[list[str]]

    async def mark_sent(self, job_ids: Sequence[str], *, token: str, now_ms: int) -> int:
        self.writes.append(list(job_ids))
        return await super().mark_sent(job_ids, token=token, now_ms=now_ms)


@pytest.fixture
async def relay_parts(
    settings_factory: Callable[..., Settings],
) -> AsyncIterator[Callable[..., tuple[OutboxRelay, CountingStore]]]:
    made: list[tuple[OutboxRelay, Any, BusHolder]] = []

    def build(**overrides: Any) -> tuple[OutboxRelay, CountingStore]:
        settings = settings_factory(**overrides)
        client = create_client(settings.mongo_url)
        store = CountingStore(client, settings.mongo_db)
        store.writes = []
        bus = BusHolder(settings.amqp_url, name="submission-settling-test")
        relay = OutboxRelay(store=store, bus=bus, settings=settings)
        made.append((relay, client, bus))
        return relay, store

    yield build
    for relay, client, bus in made:
        await relay.stop()
        await bus.close()
        await client.close()


async def submit(relay: OutboxRelay, store: SubmissionStore) -> str:
    service = SubmissionService(store, Acceptance(types=BuiltinTypes(), handoff=relay.handoff))
    accepted = await service.submit(EMAIL_JOB, identity=USER, idempotency_key=None, trace_id="t")
    return accepted.job_id


async def until(condition: Callable[[], bool], *, timeout: float = 15.0) -> None:
    async def holds() -> bool:
        return condition()

    await wait_until(holds, timeout=timeout)


async def state_of(collection: Any, job_ids: list[str]) -> set[str]:
    return {doc["outbox"]["state"] async for doc in collection.find({"_id": {"$in": job_ids}})}


async def test_entries_of_many_passes_are_marked_sent_in_one_write(
    relay_parts: Callable[..., tuple[OutboxRelay, CountingStore]],
    broker: Broker,
    collection: Any,
) -> None:
    relay, store = relay_parts(relay_settle_interval_seconds=1.0, relay_handoff_linger_seconds=0)
    await store.ensure_indexes()
    relay.start()
    job_ids = []
    for _ in range(5):  # each published in a pass of its own before the next arrives
        job_ids.append(await submit(relay, store))
        await until(lambda: len(relay.handoff) == 0 and len(relay.sent) == len(job_ids))
    published = {str(job.job_id) for job in await broker.drain_jobs()}
    assert published == set(job_ids)
    assert store.writes == []  # confirmed, not marked yet: still pending under their claim
    assert await state_of(collection, job_ids) == {"pending"}
    await until(lambda: len(relay.sent) == 0, timeout=5)
    assert store.writes == [job_ids]
    assert await state_of(collection, job_ids) == {"sent"}


async def test_stopping_the_relay_marks_what_it_published(
    relay_parts: Callable[..., tuple[OutboxRelay, CountingStore]],
    broker: Broker,
    collection: Any,
) -> None:
    relay, store = relay_parts(relay_settle_interval_seconds=5.0)
    await store.ensure_indexes()
    relay.start()
    job_ids = [await submit(relay, store) for _ in range(3)]
    await until(lambda: len(relay.sent) == 3)
    await relay.stop()
    assert await state_of(collection, job_ids) == {"sent"}
    assert sorted(str(job.job_id) for job in await broker.drain_jobs()) == sorted(job_ids)
