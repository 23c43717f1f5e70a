"""The relay and the batch paths stay lean on MongoDB, and the outbox gauges mean what they say.

Every command is recorded with PyMongo command monitoring on a client of the test's own and
then checked twice: against the collection's index key lists (equality prefix, then the sort)
and with the server's ``explain`` (nx-27017: SQLite's plan must SEARCH an index, never SCAN the
table; MongoDB: no COLLSCAN, no blocking SORT).
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import REGISTRY
from pymongo import AsyncMongoClient, monitoring

from jobs_common.rabbit import Outgoing, Publisher
from jobs_common.tenancy import personal_project_id
from jobs_submission.adapters import metrics
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
from jobs_testing.plugin import RabbitServer

from .conftest import EMAIL_JOB, USER, AppFactory, Broker, BuiltinTypes, wait_until

PERSONAL = str(personal_project_id(USER.email))
pytestmark = pytest.mark.integration

AGGREGATING = {"count", "aggregate", "distinct", "mapReduce"}
PENDING = "outbox_pending"
OLDEST = "jobs_submission_outbox_oldest_pending_seconds"


class CommandRecorder(monitoring.CommandListener):
    """Every command a client sends, as sent."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, dict[str, Any]]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.commands.append((event.command_name, copy.deepcopy(dict(event.command))))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass

    def names(self) -> list[str]:
        return [name for name, _ in self.commands]

    def queries(self) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
        """``(command, collection, filter, sort)`` of every filtered read or write."""
        for name, command in self.commands:
            if name == "find":
                yield name, command["find"], command.get("filter", {}), command.get("sort", {})
            elif name == "update":
                for update in command["updates"]:
                    yield name, command["update"], update["q"], {}
            elif name == "delete":
                for delete in command["deletes"]:
                    yield name, command["delete"], delete["q"], {}
            elif name == "count":
                yield name, command["count"], command.get("query", {}), {}


@pytest.fixture
async def monitored(mongo_url: str) -> AsyncIterator[tuple[AsyncMongoClient[Any], CommandRecorder]]:
    recorder = CommandRecorder()
    client: AsyncMongoClient[Any] = AsyncMongoClient(
        mongo_url, tz_aware=True, uuidRepresentation="standard", event_listeners=[recorder]
    )
    yield client, recorder
    await client.close()


def _pins(predicate: Any) -> bool:
    """An equality or ``$in``: the predicate pins an index key to points."""
    if isinstance(predicate, dict) and any(str(key).startswith("$") for key in predicate):
        return set(predicate) <= {"$eq", "$in"}
    return True


def _implies(query: dict[str, Any], partial: dict[str, Any]) -> bool:
    """Whether the query only matches documents of a partial index (the shapes used here)."""
    for field, condition in partial.items():
        wanted = query.get(field)
        value = wanted.get("$eq") if isinstance(wanted, dict) else wanted
        if condition == {"$type": "string"}:
            if not isinstance(value, str):
                return False
        elif value != condition:
            return False
    return True


def serving_index(
    indexes: Sequence[Mapping[str, Any]], query: dict[str, Any], sort: dict[str, Any]
) -> str | None:
    """The name of an index whose leading keys the query pins and whose next keys are the
    sort (so neither a scan nor an in-memory sort is needed), or None."""
    for index in indexes:
        keys = list(index["key"].items())
        pinned = 0
        while pinned < len(keys) and keys[pinned][0] in query and _pins(query[keys[pinned][0]]):
            pinned += 1
        if pinned == 0 or not _implies(query, index.get("partialFilterExpression", {})):
            continue
        wanted = list(sort.items())
        following = keys[pinned : pinned + len(wanted)]
        if wanted and wanted != following and wanted != [(k, -d) for k, d in following]:
            continue
        return str(index["name"])
    return None


def _stages(plan: Any) -> Iterator[str]:
    if isinstance(plan, dict):
        if isinstance(plan.get("stage"), str):
            yield plan["stage"]
        for value in plan.values():
            yield from _stages(value)
    elif isinstance(plan, list):
        for value in plan:
            yield from _stages(value)


async def assert_indexed(client: AsyncMongoClient[Any], db: str, queries: list[Any]) -> None:
    """Every recorded query is served by an index, by its key list and by the server's plan."""
    assert queries
    for name, collection, query, sort in queries:
        indexes = [index async for index in await client[db][collection].list_indexes()]
        assert serving_index(indexes, query, sort), (name, collection, query, sort, indexes)
        explain = {"find": collection, "filter": query, **({"sort": sort} if sort else {})}
        reply = await client[db].command({"explain": explain, "verbosity": "queryPlanner"})
        plan = reply["queryPlanner"]["winningPlan"]
        if isinstance(plan, list):  # nx-27017: the rows of SQLite's EXPLAIN QUERY PLAN
            details = [str(row.get("detail", "")) for row in plan]
            assert not any(d.startswith(f"SCAN {collection}") for d in details), (query, details)
            assert any(d.startswith(f"SEARCH {collection} USING") for d in details), (
                query,
                details,
            )
        else:  # MongoDB: a tree of stages
            stages = set(_stages(plan))
            assert "COLLSCAN" not in stages, (query, plan)
            assert any("IXSCAN" in s or s in {"IDHACK", "COUNT_SCAN"} for s in stages), plan
            assert not sort or "SORT" not in stages, (query, sort, plan)


def gauge(name: str) -> float | None:
    labels = {"service": "submission"} if name == PENDING else {}
    return REGISTRY.get_sample_value(name, labels)


class FailFirst(Publisher):
    """The real publisher, except that the first item of every call is refused."""

    def __init__(self, inner: Publisher) -> None:
        super().__init__(inner.exchange)

    async def publish_many(self, items: Sequence[Outgoing]) -> list[BaseException | None]:
        outcomes = await super().publish_many(items[1:])
        return [RuntimeError("refused by the test"), *outcomes]


async def _submit_pending(app_factory: AppFactory, count: int) -> list[str]:
    async with app_factory(relay_enabled=False) as app:  # creates the indexes, relays nothing
        responses = [await app.submit() for _ in range(count)]
    assert all(response.status_code == 202 for response in responses)
    return [response.json()["jobId"] for response in responses]


async def _add_sent_history(collection: Any, template_id: str, count: int) -> None:
    """Old published jobs: the growing part of the collection the hot paths must not read."""
    template = await collection.find_one({"_id": template_id})
    history = []
    for i in range(count):
        document = copy.deepcopy(template)
        document["_id"] = str(uuid.uuid4())
        document["createdAtMs"] -= 86_400_000 + i
        document["status"] = "published"
        document["outbox"]["state"] = "sent"
        history.append(document)
    await collection.insert_many(history)


async def test_startup_creates_compound_indexes_for_the_claim_and_the_gauges(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory(relay_enabled=False):
        keys = [list(index["key"].items()) async for index in await collection.list_indexes()]
    assert [("outbox.state", 1), ("outbox.nextAttemptAtMs", 1)] in keys
    assert [("outbox.state", 1), ("createdAtMs", 1)] in keys


async def test_a_relay_pass_reads_mongodb_only_through_indexes_and_never_counts(
    app_factory: AppFactory,
    settings_factory: Callable[..., Settings],
    broker: Broker,
    collection: Any,
    monitored: tuple[AsyncMongoClient[Any], CommandRecorder],
) -> None:
    job_ids = await _submit_pending(app_factory, 6)
    await _add_sent_history(collection, job_ids[0], 300)
    start = max([d["createdAtMs"] async for d in collection.find({"outbox.state": "pending"})])

    client, recorder = monitored
    # a message per job, so the test publisher can refuse one job of a pass
    settings = settings_factory(relay_batch_size=4, relay_jobs_per_message=1)
    bus = BusHolder(settings.amqp_url, name="submission-test")
    try:
        relay = OutboxRelay(
            store=SubmissionStore(client, settings.mongo_db),
            bus=bus,
            settings=settings,
            clock=lambda: start + 1_000,
        )
        publisher = FailFirst((await bus.get()).publisher)
        recorder.commands.clear()
        assert await relay.run_once(publisher) == 4  # one refused: released with backoff
        assert await relay.run_once(publisher) == 2  # the rest; the refused one is not due
    finally:
        await bus.close()

    names = recorder.names()
    assert not AGGREGATING & set(names), names
    # claim (find, update, find), mark sent (update), release (update), gauges (find)
    assert names.count("find") == 6
    assert "update" in names
    await assert_indexed(client, settings.mongo_db, list(recorder.queries()))
    assert len(await broker.drain_jobs()) == 4
    assert gauge(PENDING) == 2  # the refused one, the one refused in the second pass


async def test_the_outbox_gauges_count_pending_entries_and_age_the_oldest(
    app_factory: AppFactory,
    settings_factory: Callable[..., Settings],
    broker: Broker,
    collection: Any,
    monitored: tuple[AsyncMongoClient[Any], CommandRecorder],
) -> None:
    pending = await _submit_pending(app_factory, 7)
    held, sent = pending.pop(), pending.pop()
    base = 1_700_000_000_000
    for i, job_id in enumerate(pending):  # accepted one second apart, oldest first
        moment = base + i * 1_000
        await collection.update_one(
            {"_id": job_id},
            {"$set": {"createdAtMs": moment, "outbox.nextAttemptAtMs": moment}},
        )
    # the oldest was refused by the broker a few times: it backs off, due again in 10 minutes
    await collection.update_one(
        {"_id": pending[0]},
        {"$set": {"outbox.nextAttemptAtMs": base + 600_000, "outbox.attempts": 3}},
    )
    # older than all of them, but not pending: a held batch member and a published job
    await collection.update_one(
        {"_id": held}, {"$set": {"createdAtMs": base - 50_000, "outbox.state": "held"}}
    )
    await collection.update_one(
        {"_id": sent}, {"$set": {"createdAtMs": base - 60_000, "outbox.state": "sent"}}
    )

    client, recorder = monitored
    now = {"ms": base + 60_000}
    bus = BusHolder(settings_factory().amqp_url, name="submission-test")
    try:

        def relay(**overrides: Any) -> OutboxRelay:
            settings = settings_factory(**overrides)
            store = SubmissionStore(client, settings.mongo_db)
            return OutboxRelay(store=store, bus=bus, settings=settings, clock=lambda: now["ms"])

        capped = relay(relay_pending_count_limit=3)
        await capped.refresh_gauges()
        assert gauge(PENDING) == 3  # the limit: at least 3
        assert gauge(OLDEST) == 60.0

        exact = relay(relay_batch_size=2, relay_pending_count_limit=100)
        await exact.refresh_gauges()
        assert gauge(PENDING) == 5
        assert gauge(OLDEST) == 60.0

        now["ms"] += 5_000  # no pass: the age still grows with the clock
        assert gauge(OLDEST) == 65.0

        publisher = (await bus.get()).publisher
        assert await exact.run_once(publisher) == 2  # the two oldest that are due
        assert gauge(PENDING) == 3
        assert gauge(OLDEST) == 65.0  # the backing-off one counts from its acceptance

        while await exact.run_once(publisher):
            pass
        assert gauge(PENDING) == 1
        assert gauge(OLDEST) == 65.0

        now["ms"] = base + 600_000  # due again
        assert await exact.run_once(publisher) == 1
        assert gauge(PENDING) == 0
        assert gauge(OLDEST) == 0.0
    finally:
        await bus.close()

    assert not AGGREGATING & set(recorder.names()), recorder.names()
    assert len(await broker.drain_jobs()) == 5  # held and sent entries are not relayed
    assert (await collection.find_one({"_id": held}))["outbox"]["state"] == "held"


async def test_the_outbox_gauges_keep_up_while_the_broker_is_down(
    app_factory: AppFactory, rabbit_server: RabbitServer
) -> None:
    metrics.OUTBOX_PENDING.set(-1)
    metrics.OUTBOX_OLDEST_PENDING.set_function(lambda: -1.0)
    absent = rabbit_server.url_for(f"test-absent-{uuid.uuid4().hex[:10]}")
    async with app_factory(amqp_url=absent) as app:
        assert (await app.submit()).status_code == 202
        assert (await app.submit({**EMAIL_JOB, "priority": 1}, identity=USER)).status_code == 202

        async def gauges_show_the_backlog() -> bool:
            oldest = gauge(OLDEST)
            return gauge(PENDING) == 2 and oldest is not None and oldest > 0

        await wait_until(gauges_show_the_backlog)
        assert (await app.client.get("/ready")).json()["checks"]["broker"] is False


async def test_batch_writes_gate_status_and_replay_use_indexes_and_no_aggregation(
    app_factory: AppFactory,
    collection: Any,
    monitored: tuple[AsyncMongoClient[Any], CommandRecorder],
) -> None:
    body = {"jobs": [dict(EMAIL_JOB) for _ in range(3)]}
    async with app_factory() as app:
        accepted = await app.submit_batch(body, key="nightly")
        assert accepted.status_code == 202
        batch_id = accepted.json()["batchId"]

        async def all_sent() -> bool:
            remaining: int = await collection.count_documents({"outbox.state": {"$ne": "sent"}})
            return remaining == 0

        await wait_until(all_sent)
        settings = app.settings

    client, recorder = monitored
    submissions = SubmissionStore(client, settings.mongo_db)
    batches = BatchStore(submissions)
    recorder.commands.clear()
    assert await batches.count_published(batch_id) == 3
    assert await batches.reopen_members(batch_id, token="t", now_ms=0, earlier=True) == 0
    await batches.discard(str(uuid.uuid4()))
    job_ids = accepted.json()["jobIds"]
    # the relay's gate for members it claimed: their batches, then writes fenced by its token
    states = await submissions.batch_states([batch_id, str(uuid.uuid4())])
    assert [state["state"] for state in states.values()] == ["accepted"]
    assert await batches.defer_members(job_ids, token="t", next_attempt_ms=0) == 0
    assert await batches.hold_members(job_ids, token="t") == 0
    assert await batches.drop_members(job_ids, token="t") == 0
    assert sorted(await submissions.projects_of(job_ids)) == sorted(job_ids)
    replayed = await batches.find_by_idempotency_key(USER.email, PERSONAL, "nightly")
    assert replayed is not None and replayed["_id"] == batch_id
    assert await submissions.find_by_idempotency_key(USER.email, PERSONAL, "absent") is None

    names = recorder.names()
    assert "aggregate" not in names, names
    await assert_indexed(client, settings.mongo_db, list(recorder.queries()))


def _writes_to(recorder: CommandRecorder, collection: str) -> list[str]:
    return [
        name
        for name, command in recorder.commands
        if name in {"insert", "update", "delete"} and command.get(name) == collection
    ]


@pytest.mark.parametrize("lease_left", ["in time", "half gone"])
async def test_a_batch_writes_its_members_once_unless_their_claim_may_have_run_out(
    app_factory: AppFactory,
    monitored: tuple[AsyncMongoClient[Any], CommandRecorder],
    lease_left: str,
) -> None:
    """One ``insert`` of the members, claimed by the relay's hand-off, and no update of them:
    the batch document's flip alone makes them publishable. Only when half the claim was gone
    by the flip (another relay may have claimed one meanwhile) are they reopened for any relay
    instead of handed over."""
    async with app_factory(relay_enabled=False) as app:  # the indexes
        settings = app.settings
    client, recorder = monitored
    submissions = SubmissionStore(client, settings.mongo_db)
    store = BatchStore(submissions)
    handoff = HandOff(lease_ms=30_000, wake=lambda: None)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    late = {"in time": timedelta(seconds=1), "half gone": timedelta(seconds=16)}[lease_left]
    # the request's clock: its start, the members' claim, then the moment of the flip
    moments = [start, start]
    service = BatchService(
        submissions,
        store,
        Acceptance(
            types=BuiltinTypes(),
            handoff=handoff,
            clock=lambda: moments.pop(0) if moments else start + late,
        ),
    )
    recorder.commands.clear()
    accepted = await service.submit(
        {"jobs": [dict(EMAIL_JOB) for _ in range(5)]},
        identity=USER,
        idempotency_key=None,
        trace_id="t" * 32,
    )

    members = await client[settings.mongo_db]["submissions"].find().to_list()
    assert sorted(m["_id"] for m in members) == sorted(accepted.job_ids)
    assert {m["outbox"]["state"] for m in members} == {"pending"}
    if lease_left == "in time":
        assert _writes_to(recorder, "submissions") == ["insert"]
        assert len(handoff) == 5
        assert {m["outbox"]["claimToken"] for m in members} == {handoff.token}
    else:
        assert _writes_to(recorder, "submissions") == ["insert", "update"]
        assert len(handoff) == 0
        assert {m["outbox"]["claimToken"] for m in members} == {None}
        assert {m["outbox"]["nextAttemptAtMs"] for m in members} == {to_ms(start + late)}
    assert _writes_to(recorder, "batches") == ["insert", "update"]


async def test_concurrent_single_submissions_share_inserts_and_each_keeps_its_outcome(
    app_factory: AppFactory,
    collection: Any,
    monitored: tuple[AsyncMongoClient[Any], CommandRecorder],
) -> None:
    """What arrives while an insert is in flight goes in the next one
    (adapters/group_insert.py), and each request still gets its own answer: accepted, or a
    replay of its Idempotency-Key."""
    async with app_factory(relay_enabled=False) as app:  # the indexes
        settings = app.settings
    client, recorder = monitored
    service = SubmissionService(
        SubmissionStore(client, settings.mongo_db), Acceptance(types=BuiltinTypes())
    )
    recorder.commands.clear()

    def submit(key: str | None, body: dict[str, Any] = EMAIL_JOB) -> Any:
        return service.submit(dict(body), identity=USER, idempotency_key=key, trace_id="t" * 32)

    other = {**EMAIL_JOB, "priority": 3}
    answers = await asyncio.gather(
        *(submit(None) for _ in range(30)),
        *(submit("same") for _ in range(5)),
        submit("other", other),
        submit("other", EMAIL_JOB),  # the same key with another body, in the same group
        return_exceptions=True,
    )
    fresh, same, (first, clash) = answers[:30], answers[30:35], answers[35:]
    assert all(not a.replayed for a in fresh) and len({a.job_id for a in fresh}) == 30
    assert len({a.job_id for a in same}) == 1 and sum(not a.replayed for a in same) == 1
    outcomes = [type(answer).__name__ for answer in (first, clash)]
    assert sorted(outcomes) == ["Accepted", "Conflict"], outcomes  # one key, two bodies
    stored = await collection.count_documents({})
    assert stored == 30 + 1 + 1
    inserts = _writes_to(recorder, "submissions")
    assert 1 <= len(inserts) < 10, inserts  # 37 requests, a handful of round trips
