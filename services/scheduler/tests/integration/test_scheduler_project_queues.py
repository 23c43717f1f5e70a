"""A project's queues in the scheduler (docs/flow-control.md), on a real job store and broker:
the internal API's commands with the answers the dashboard passes on (409, 422, 404), a
queue created by its project's first job, and the relay's pause gate: a paused queue's
dispatches stay in the outbox (their jobs ``queued``, the reconciler leaves them alone) while
another project's queue of the same name goes on; resume sends them, a cancelled one never."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aiormq
import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.auth import Identity
from jobs_common.contracts import CancelRequested, JobDispatch, utcnow
from jobs_common.jobstore import jobs, outbox, project_flow, queues, retry_policies
from jobs_common.rabbit import RabbitBus
from jobs_common.tenancy import OrgRole, personal_project_id
from jobs_scheduler.adapters.flow_control import FlowControl
from jobs_scheduler.adapters.outbox_relay import OutboxRelay
from jobs_scheduler.service import Runtime, start_runtime, stop_runtime
from jobs_scheduler.settings import Settings

from .conftest import as_, eventually, job_result, next_dispatch, submitted, wait_status

pytestmark = pytest.mark.integration

USER = Identity(user_id="u-1", email="user@test.com", role="user")
OTHER = Identity(user_id="u-2", email="other@test.com", role="user")
ADMIN = Identity(user_id="u-3", email="admin@test.com", role="admin")
PATH = "/internal/v1/queues"
POLICIES = "/internal/v1/retry-policies"


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """``quick_reconciler``: to show it leaves a held dispatch's job alone."""
    if request.node.get_closest_marker("quick_reconciler") is None:
        return scheduler_settings
    return scheduler_settings.model_copy(
        update={"reconcile_after_seconds": 0.5, "reconcile_interval_seconds": 0.1}
    )


def team_member(role: OrgRole, team: uuid.UUID) -> Identity:
    return Identity(
        user_id=f"u-{role.value}",
        email=f"{role.value}@test.com",
        role="user",
        project_id=str(team),
        project_role=role,
        grants=((str(team), role),),
    )


async def test_create_change_pause_resume_delete_in_the_request_s_project(
    api: httpx.AsyncClient,
) -> None:
    created = await api.post(
        PATH,
        json={"name": "emails", "maxConcurrency": 3, "rateLimit": {"limit": 20, "per": "second"}},
        headers=as_(USER),
    )
    assert created.status_code == 201, created.text
    view = created.json()
    assert view["projectId"] == str(personal_project_id(USER.email))
    assert (view["maxConcurrency"], view["rateLimit"], view["paused"]) == (
        3,
        {"limit": 20, "per": "second"},
        False,
    )
    assert (view["createdBy"], view["waiting"], view["running"]) == (USER.email, 0, 0)
    queue = f"{PATH}/{view['id']}"

    again = await api.post(PATH, json={"name": "emails"}, headers=as_(USER))
    assert again.status_code == 409
    assert again.json()["details"] == [
        {"field": "name", "message": "already used by a queue of this project"}
    ]
    # The name is the project's: another project may have a queue of that name.
    assert (await api.post(PATH, json={"name": "emails"}, headers=as_(OTHER))).status_code == 201

    changed = await api.patch(
        queue,
        json={"rateLimit": None, "concurrencyKey": {"field": "customerId", "limit": 1}},
        headers=as_(USER),
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["maxConcurrency"], body["rateLimit"], body["concurrencyKey"]) == (
        3,
        None,
        {"field": "customerId", "limit": 1},
    )
    unknown_policy = await api.patch(
        queue, json={"defaultRetryPolicy": "gentle"}, headers=as_(USER)
    )
    assert unknown_policy.status_code == 422
    assert unknown_policy.json()["details"][0]["field"] == "defaultRetryPolicy"
    policy = {
        "name": "gentle",
        "strategy": "fixed",
        "baseDelayMs": 100,
        "multiplier": 1,
        "maxDelayMs": 100,
        "jitter": False,
    }
    assert (await api.post(POLICIES, json=policy, headers=as_(USER))).status_code == 201
    named = await api.patch(queue, json={"defaultRetryPolicy": "gentle"}, headers=as_(USER))
    assert named.json()["defaultRetryPolicy"] == "gentle"
    assert (await api.patch(queue, json={"paused": True}, headers=as_(USER))).status_code == 422

    assert (await api.post(f"{queue}/pause", headers=as_(OTHER))).status_code == 404
    paused = (await api.post(f"{queue}/pause", headers=as_(USER))).json()
    assert (paused["paused"], paused["pausedBy"]) == (True, USER.email)
    # Idempotent: a second pause (here the platform admin's) keeps the first one's facts.
    twice = (await api.post(f"{queue}/pause", headers=as_(ADMIN))).json()
    assert (twice["pausedAt"], twice["pausedBy"]) == (paused["pausedAt"], USER.email)
    resumed = (await api.post(f"{queue}/resume", headers=as_(USER))).json()
    assert (resumed["paused"], resumed["pausedAt"], resumed["pausedBy"]) == (False, None, None)

    assert (await api.delete(queue, headers=as_(OTHER))).status_code == 404
    assert (await api.delete(queue, headers=as_(USER))).status_code == 204
    assert (await api.delete(queue, headers=as_(USER))).status_code == 404


async def test_a_team_s_admins_manage_its_queues_and_its_viewers_do_not(
    api: httpx.AsyncClient,
) -> None:
    team = uuid.uuid4()
    viewer, admin = team_member(OrgRole.VIEWER, team), team_member(OrgRole.ADMIN, team)
    refused = await api.post(PATH, json={"name": "reports"}, headers=as_(viewer))
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        "a viewer may not manage queues in this project",
    )
    created = await api.post(PATH, json={"name": "reports"}, headers=as_(admin))
    assert (created.status_code, created.json()["projectId"]) == (201, str(team))
    queue = f"{PATH}/{created.json()['id']}"
    # The scheduler checks the scope again: a viewer's command finds no queue it may change.
    assert (await api.post(f"{queue}/pause", headers=as_(viewer))).status_code == 404
    assert (await api.post(f"{queue}/pause", headers=as_(admin))).status_code == 200


async def test_a_queue_with_unfinished_jobs_is_not_deleted(
    api: httpx.AsyncClient, bus: RabbitBus, db: AsyncEngine
) -> None:
    job = submitted(queue="reports")
    await bus.publisher.publish(topology.SUBMITTED, job)
    await wait_status(db, job.job_id, "queued")
    async with db.connect() as connection:
        queue_id = await connection.scalar(select(queues.c.id).where(queues.c.name == "reports"))
    answer = await api.delete(f"{PATH}/{queue_id}", headers=as_(USER))
    assert (answer.status_code, answer.json()["error"]) == (409, "conflict")
    async with db.begin() as connection:
        await connection.execute(
            update(jobs).where(jobs.c.id == job.job_id).values(status="succeeded")
        )
    assert (await api.delete(f"{PATH}/{queue_id}", headers=as_(USER))).status_code == 204


async def test_a_project_s_first_job_on_a_queue_creates_it_with_no_limits(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    first, second = submitted(queue="reports"), submitted(queue="reports")
    for job in (first, second):
        await bus.publisher.publish(topology.SUBMITTED, job)
        await wait_status(db, job.job_id, "queued")
    other = submitted(queue="reports", submitted_by=OTHER.email)
    await bus.publisher.publish(topology.SUBMITTED, other)
    await wait_status(db, other.job_id, "queued")
    async with db.connect() as connection:
        rows = (
            await connection.execute(
                select(queues).where(queues.c.name == "reports").order_by(queues.c.created_at)
            )
        ).all()
    assert [(row.project_id, row.created_by) for row in rows] == [
        (personal_project_id(USER.email), "first job"),
        (personal_project_id(OTHER.email), "first job"),
    ]
    assert all(
        (row.max_concurrency, row.rate_limit, row.paused) == (None, None, False) for row in rows
    )


async def set_queue(db: AsyncEngine, owner: str, name: str, **values: Any) -> None:
    """``values`` on the queue ``name`` of ``owner``'s personal project (created if missing)."""
    project = personal_project_id(owner)
    async with db.begin() as connection:
        await connection.execute(
            insert(queues)
            .values(id=uuid.uuid4(), project_id=project, name=name, created_by=owner)
            .on_conflict_do_nothing(index_elements=["project_id", "name"])
        )
        await connection.execute(
            update(queues)
            .where(queues.c.project_id == project, queues.c.name == name)
            .values(**values)
        )


async def pause(db: AsyncEngine, owner: str, name: str, *, paused: bool = True) -> None:
    await set_queue(db, owner, name, paused=paused)


async def nothing_on(bus: RabbitBus, queue: str, *, for_seconds: float = 1.0) -> None:
    ready = bus.topology.queues[queue]
    await asyncio.sleep(for_seconds)
    message = await ready.get(no_ack=True, fail=False)
    assert message is None, JobDispatch.model_validate_json(message.body)


async def held_order(db: AsyncEngine) -> list[uuid.UUID]:
    """The jobs whose dispatches the outbox holds, in the order it would send them."""
    async with db.connect() as connection:
        rows = await connection.execute(
            select(outbox.c.job_id).where(outbox.c.job_id.is_not(None)).order_by(outbox.c.id)
        )
        return [row.job_id for row in rows]


async def held(db: AsyncEngine, job_id: uuid.UUID) -> Any:
    async with db.connect() as connection:
        return (
            await connection.execute(
                select(outbox.c.project_id, outbox.c.queue).where(outbox.c.job_id == job_id)
            )
        ).all()


@pytest.mark.quick_reconciler
async def test_a_paused_queue_dispatches_nothing_until_resumed_and_others_go_on(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    await pause(db, USER.email, "default")
    waiting = [submitted(priority=2) for _ in range(3)]
    for job in waiting:
        await bus.publisher.publish(topology.SUBMITTED, job)
    cancelled = submitted(priority=2)
    await bus.publisher.publish(topology.SUBMITTED, cancelled)
    # Another project's queue of the same name (the same broker lane) is not paused.
    others = submitted(priority=2, submitted_by=OTHER.email)
    await bus.publisher.publish(topology.SUBMITTED, others)
    assert (await next_dispatch(bus, topology.READY_MEDIUM)).job_id == others.job_id
    async with db.begin() as connection:  # done, so the quick reconciler leaves it alone
        await connection.execute(
            update(jobs).where(jobs.c.id == others.job_id).values(status="succeeded")
        )

    clocks = {}
    for job in (*waiting, cancelled):
        row = await wait_status(db, job.job_id, "queued")
        clocks[job.job_id] = row.queued_at
        assert await held(db, job.job_id) == [(personal_project_id(USER.email), "default")]
    await nothing_on(bus, topology.READY_MEDIUM, for_seconds=1.5)  # past the reconciler's 0.5 s
    for job in waiting:
        assert (await wait_status(db, job.job_id, "queued")).attempt == 1

    await bus.publisher.publish(
        topology.CANCEL,
        CancelRequested(job_id=cancelled.job_id, requested_by=USER.email, requested_at=utcnow()),
    )
    await wait_status(db, cancelled.job_id, "cancelled")
    assert await held(db, cancelled.job_id) == []

    order = await held_order(db)
    assert sorted(order) == sorted(job.job_id for job in waiting)
    await pause(db, USER.email, "default", paused=False)
    sent = [await next_dispatch(bus, topology.READY_MEDIUM) for _ in waiting]
    assert [d.job_id for d in sent] == order  # in the order they were dispatched
    assert {d.attempt for d in sent} == {1}

    async def clocks_restarted() -> bool:
        rows = [await wait_status(db, job.job_id, "queued") for job in waiting]
        return all(row.queued_at > clocks[row.id] for row in rows)

    # The reconciler counts from the publish, not from the dispatch that waited.
    await eventually(clocks_restarted, what="the reconciler's clocks restarted at the resume")


async def limit(db: AsyncEngine, owner: str, name: str, **values: Any) -> None:
    """Set a queue's limits, and wait out the relays' quarter-second view of which queues are
    limited (four times over)."""
    await set_queue(db, owner, name, **values)
    await asyncio.sleep(1.1)


async def take_all(bus: RabbitBus, queue: str = topology.READY_MEDIUM) -> list[JobDispatch]:
    ready = bus.topology.queues[queue]
    taken = []
    while (message := await ready.get(no_ack=True, fail=False)) is not None:
        taken.append(JobDispatch.model_validate_json(message.body))
    return taken


async def test_a_limited_queue_never_has_more_in_flight_than_its_limit_across_replicas(
    scheduler: Runtime, scheduler_settings: Settings, bus: RabbitBus, db: AsyncEngine
) -> None:
    """Two replicas' relays, twelve jobs on a queue limited to 2: at most two dispatched and
    unfinished at any time; each result frees one slot, once; another project's queue of
    the same name is not limited."""
    second = await start_runtime(scheduler_settings)
    try:
        await limit(db, USER.email, "default", max_concurrency=2)
        jobs_ = [submitted() for _ in range(12)]
        free = submitted(submitted_by=OTHER.email)
        for job in (*jobs_, free):
            await bus.publisher.publish(topology.SUBMITTED, job)
        taken: list[JobDispatch] = []

        async def two_taken() -> bool:
            taken.extend(await take_all(bus))
            return len([d for d in taken if d.job_id != free.job_id]) >= 2

        await eventually(two_taken, what="the first two dispatches")
        finished = 0

        def mine() -> list[JobDispatch]:
            return [d for d in taken if d.job_id != free.job_id]

        async def limit_in_flight() -> bool:
            taken.extend(await take_all(bus))
            return len(mine()) - finished == 2 or len(mine()) == len(jobs_)

        while finished < len(jobs_):
            await eventually(limit_in_flight, what="the freed slot taken")
            await asyncio.sleep(0.4)  # several more passes of both relays: nothing more goes
            taken.extend(await take_all(bus))
            assert len(mine()) - finished <= 2, "more dispatched than the limit"
            done = mine()[finished]
            await bus.publisher.publish(topology.RESULTS, job_result(done.job_id, done.attempt))
            await wait_status(db, done.job_id, "succeeded")
            finished += 1
        assert free.job_id in {d.job_id for d in taken}
        assert sorted(d.job_id for d in taken if d.job_id != free.job_id) == sorted(
            j.job_id for j in jobs_
        )
        assert {d.attempt for d in taken} == {1}
    finally:
        await stop_runtime(second)


async def test_a_rate_limited_queue_starts_no_faster_than_its_rate_across_replicas(
    scheduler: Runtime, scheduler_settings: Settings, bus: RabbitBus, db: AsyncEngine
) -> None:
    """10 jobs/s (a bucket of 5): two replicas together send at most 5 + 10 per second.
    Arrivals are timed when the test takes them (never before the broker had them) and
    counted from before the submissions: a slow poll only moves them later."""
    second = await start_runtime(scheduler_settings)
    try:
        await limit(db, USER.email, "default", rate_limit=10, rate_per_seconds=1)
        jobs_ = [submitted() for _ in range(40)]
        loop = asyncio.get_running_loop()
        submitted_at = loop.time()
        for job in jobs_:
            await bus.publisher.publish(topology.SUBMITTED, job)
        arrivals: list[float] = []

        async def all_taken() -> bool:
            arrivals.extend(loop.time() for _ in await take_all(bus))
            return len(arrivals) >= len(jobs_)

        await eventually(all_taken, timeout=20, what="every dispatch of the rate-limited queue")
        for window in (1.0, 2.0, 3.0):
            within = sum(1 for t in arrivals if t - submitted_at < window)
            assert within <= 5 + 10 * window, (window, within)
        assert len(arrivals) == len(jobs_)
    finally:
        await stop_runtime(second)


async def test_a_concurrency_key_keeps_one_job_per_value_in_flight(
    scheduler: Runtime, scheduler_settings: Settings, bus: RabbitBus, db: AsyncEngine
) -> None:
    """Two replicas; 12 jobs over 4 customers, 1 in flight per customer: never two of one
    customer dispatched and unfinished at once, and every job once."""
    second = await start_runtime(scheduler_settings)
    try:
        await limit(
            db, USER.email, "default", concurrency_key="customerId", concurrency_key_limit=1
        )
        jobs_ = [submitted(payload={"customerId": f"c{n % 4}", "n": n}) for n in range(12)]
        for job in jobs_:
            await bus.publisher.publish(topology.SUBMITTED, job)
        customer = {job.job_id: job.payload["customerId"] for job in jobs_}
        in_flight: dict[str, uuid.UUID] = {}
        seen: list[JobDispatch] = []

        async def take() -> bool:
            for dispatch in await take_all(bus):
                owner = customer[dispatch.job_id]
                assert owner not in in_flight, f"two jobs of {owner} in flight"
                in_flight[owner] = dispatch.job_id
                seen.append(dispatch)
            return bool(in_flight)

        while len(seen) < len(jobs_):
            await eventually(take, what="a dispatch")
            await asyncio.sleep(0.3)  # several passes of both relays
            await take()
            owner, job_id = sorted(in_flight.items())[0]
            del in_flight[owner]
            await bus.publisher.publish(topology.RESULTS, job_result(job_id, 1))
            await wait_status(db, job_id, "succeeded")
        assert sorted(d.job_id for d in seen) == sorted(j.job_id for j in jobs_)
    finally:
        await stop_runtime(second)


async def test_dispatches_committed_after_a_pass_read_the_budgets_are_still_held(
    db: AsyncEngine,
) -> None:
    """The race of two statements: a pass reads the limited queues with waiting dispatches
    (none yet), then three dispatches of a queue limited to 1 commit, then the pass locks the
    outbox rows: it sends one."""
    project = personal_project_id(USER.email)
    async with db.begin() as connection:
        await connection.execute(
            insert(queues).values(
                id=uuid.uuid4(),
                project_id=project,
                name="default",
                created_by="t",
                max_concurrency=1,
            )
        )
    flow = FlowControl(refresh=0)
    relay = OutboxRelay(db, {}, limit=100, clock_slack=5, flow=flow)
    async with db.connect() as connection, connection.begin():
        budgets = await flow.budgets(connection)
        assert budgets == {}
        async with db.begin() as other:
            await other.execute(
                insert(outbox),
                [
                    {
                        "routing_key": topology.READY_MEDIUM,
                        "job_id": uuid.uuid4(),
                        "message_id": uuid.uuid4(),
                        "message_type": "job.dispatch",
                        "trace_id": "t",
                        "body": b'{"payload": {}}',
                        "project_id": project,
                        "queue": "default",
                    }
                    for _ in range(3)
                ],
            )
        rows = await relay._lock(connection, budgets, {})
    assert len(rows) == 1
    # Two wait for the slot: the commit of a job that moves on wakes the relay (service.py).
    assert relay.waiting_for_slots


async def test_a_job_naming_no_timeout_or_retry_policy_takes_its_queue_s_defaults(
    api: httpx.AsyncClient, bus: RabbitBus, db: AsyncEngine
) -> None:
    """The queue's default timeout and retry policy (one of its project's named policies) fill
    what a job leaves out; a job's own values win. A change applies to the next job (on the
    replica that made it at once)."""
    project = personal_project_id(USER.email)
    async with db.begin() as connection:
        await connection.execute(
            insert(retry_policies).values(
                name="gentle",
                project_id=project,
                strategy="fixed",
                base_delay_ms=5000,
                multiplier=1.0,
                max_delay_ms=5000,
                jitter=False,
                max_attempts=7,
                created_by="t",
            )
        )
    created = await api.post(
        "/internal/v1/queues",
        json={
            "name": "reports",
            "defaultTimeoutSeconds": 60,
            "defaultRetryPolicy": "gentle",
            "defaultPriority": 3,
        },
        headers=as_(USER),
    )
    assert created.status_code == 201, created.text
    bare = submitted(
        queue="reports", timeout_seconds=None, max_attempts=None, priority_default=True
    )
    own = submitted(queue="reports", timeout_seconds=5, retry_policy_name="mine", priority=1)
    elsewhere = submitted(priority_default=True)  # the default queue has no default priority
    for job in (bare, own, elsewhere):
        await bus.publisher.publish(topology.SUBMITTED, job)
    first = await wait_status(db, bare.job_id, "queued")
    second = await wait_status(db, own.job_id, "queued")
    third = await wait_status(db, elsewhere.job_id, "queued")
    assert (first.timeout_seconds, first.max_attempts, first.priority) == (60, 7, 3)
    assert first.retry_policy["strategy"] == "fixed"
    assert (second.timeout_seconds, second.priority) == (5, 1)
    assert third.priority == 2
    dispatched = await eventually_taken(bus, topology.ready_queue_for(3, "reports"), bare.job_id)
    assert dispatched.priority == 3


async def eventually_taken(bus: RabbitBus, queue: str, job_id: uuid.UUID) -> JobDispatch:
    """The dispatch of ``job_id`` once it is on the ready queue ``queue``."""
    taken: list[JobDispatch] = []

    async def found() -> bool:
        taken.extend(await take_named(bus, queue))
        return any(d.job_id == job_id for d in taken)

    await eventually(found, what=f"the dispatch on {queue}")
    return next(d for d in taken if d.job_id == job_id)


async def take_named(bus: RabbitBus, queue: str) -> list[JobDispatch]:
    """As :func:`take_all`, for a ready queue the relay declares with its first dispatch
    (none yet: nothing taken)."""
    async with bus.connection.channel() as channel:
        try:
            ready = await channel.declare_queue(queue, passive=True)
        except aiormq.exceptions.ChannelNotFoundEntity:
            return []
        taken = []
        while (message := await ready.get(no_ack=True, fail=False)) is not None:
            taken.append(JobDispatch.model_validate_json(message.body))
        return taken


async def limit_project(db: AsyncEngine, owner: str, max_running: int | None) -> None:
    """Set ``owner``'s personal project's most running, and wait out the relays' view."""
    project = personal_project_id(owner)
    async with db.begin() as connection:
        await connection.execute(
            insert(project_flow)
            .values(project_id=project, updated_by=owner, max_running=max_running)
            .on_conflict_do_update(index_elements=["project_id"], set_={"max_running": max_running})
        )
    await asyncio.sleep(1.1)


async def test_a_project_s_most_running_holds_across_its_queues_and_replicas(
    scheduler: Runtime, scheduler_settings: Settings, bus: RabbitBus, db: AsyncEngine
) -> None:
    """Two replicas; a project limited to 3 in flight, its 10 jobs over two queues (neither
    limited): never more than 3 of them dispatched and unfinished, each result frees one
    slot; another project's jobs go on."""
    second = await start_runtime(scheduler_settings)
    try:
        await limit_project(db, USER.email, 3)
        jobs_ = [submitted(queue="default" if n % 2 else "reports") for n in range(10)]
        free = submitted(submitted_by=OTHER.email)
        for job in (*jobs_, free):
            await bus.publisher.publish(topology.SUBMITTED, job)
        queues_ = (topology.READY_MEDIUM, topology.ready_queue_for(2, "reports"))
        taken: list[JobDispatch] = []
        from_queues: set[str] = set()
        finished = 0

        def mine() -> list[JobDispatch]:
            return [d for d in taken if d.job_id != free.job_id]

        async def take() -> None:
            for queue in queues_:
                found = await take_named(bus, queue)
                taken.extend(found)
                from_queues.update(queue for _ in found[:1])

        async def limit_in_flight() -> bool:
            await take()
            return len(mine()) - finished == 3 or len(mine()) == len(jobs_)

        while finished < len(jobs_):
            await eventually(limit_in_flight, what="the project's free slots taken")
            await asyncio.sleep(0.4)  # several more passes of both relays: nothing more goes
            await take()
            assert len(mine()) - finished <= 3, "more of the project in flight than its limit"
            done = mine()[finished]
            await bus.publisher.publish(topology.RESULTS, job_result(done.job_id, done.attempt))
            await wait_status(db, done.job_id, "succeeded")
            finished += 1
        assert free.job_id in {d.job_id for d in taken}
        assert sorted(d.job_id for d in mine()) == sorted(j.job_id for j in jobs_)
        assert {d.attempt for d in taken} == {1}
        assert from_queues == set(queues_)
    finally:
        await stop_runtime(second)


async def test_a_project_s_dispatches_committed_after_a_pass_read_its_slots_are_held(
    db: AsyncEngine,
) -> None:
    """As for a queue: a pass reads the limited projects with waiting dispatches (none yet),
    then three dispatches of a project limited to 1 commit; the pass sends one."""
    project = personal_project_id(USER.email)
    async with db.begin() as connection:
        await connection.execute(
            insert(project_flow).values(project_id=project, updated_by="t", max_running=1)
        )
    flow = FlowControl(refresh=0)
    relay = OutboxRelay(db, {}, limit=100, clock_slack=5, flow=flow)
    async with db.connect() as connection, connection.begin():
        budgets = await flow.budgets(connection)
        slots = await flow.project_slots(connection)
        assert budgets == {} and slots == {}
        async with db.begin() as other:
            await other.execute(
                insert(outbox),
                [
                    {
                        "routing_key": queue,
                        "job_id": uuid.uuid4(),
                        "message_id": uuid.uuid4(),
                        "message_type": "job.dispatch",
                        "trace_id": "t",
                        "body": b'{"payload": {}}',
                        "project_id": project,
                        "queue": name,
                    }
                    for queue, name in (
                        (topology.READY_MEDIUM, "default"),
                        (topology.READY_HIGH, "default"),
                        (topology.ready_queue_for(2, "reports"), "reports"),
                    )
                ],
            )
        rows = await relay._lock(connection, budgets, slots)
    assert len(rows) == 1
    assert relay.waiting_for_slots
