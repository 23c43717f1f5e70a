"""A project's queue limits hold with every service a real process (issue 33, point 2;
docs/flow-control.md): three workers and two scheduler replicas, a queue limited to 3 jobs
in flight, 60 jobs of half a second. The jobs running, sampled from the database every 50 ms,
never exceed 3, while a worker is SIGKILLed mid-run and its jobs' leases run out; every job
succeeds, and only the killed worker's jobs run twice. A paused queue then starts nothing
until it is resumed, while another project's queue of the same name goes on."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from jobs_testing.gateway_session import signed_in
from jobs_testing.infra import free_port
from jobs_testing.plugin import PostgresServer, RabbitServer
from jobs_testing.stack import Stack

from .conftest import running_stack
from .test_scheduling_e2e import worker_service

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

LIMIT = 3
PASSWORD = "a-long-password"
WINDOW = 200  # SCHEDULER_READY_WINDOW here
QUOTA_IDLE_SECONDS = 1
MEDIUM_PREFETCH = 10  # WORKER_PREFETCH_MEDIUM's default
QUICK = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0.3, "maxSeconds": 0.3}
HALF_SECOND = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0.5, "maxSeconds": 0.5}


@pytest.fixture(scope="module")
async def stack(
    postgres_server: PostgresServer,
    rabbit_server: RabbitServer,
    mongo_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    async with running_stack(
        postgres_server,
        rabbit_server,
        mongo_url,
        tmp_path_factory.mktemp("flow-control"),
        workers=3,
        worker_ports=(free_port(), free_port(), free_port()),
        schedulers=2,
        extra_env={
            "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
            "SCHEDULER_LEASE_SECONDS": "3",
            # Heartbeats well below that lease (docs/worker.md): at the default 2 s, one heartbeat
            # a second late on a loaded machine let a live worker's leases run out.
            "WORKER_HEARTBEAT_INTERVAL": "0.75",
            "SCHEDULER_RETRY_BASE_DELAY_MS": "200",
            # A smaller window than the default 1,000 (docs/flow-control.md, "Fair dispatch"),
            # so the flood test's bound is far below the flood's length.
            "SCHEDULER_READY_WINDOW": str(WINDOW),
            # A project's quotas set take effect within a second (5 s by default).
            "SUBMISSION_PROJECT_QUOTA_IDLE_SECONDS": str(QUOTA_IDLE_SECONDS),
        },
    ) as running:
        yield running


@pytest.fixture
async def admin(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    gateway = f"http://127.0.0.1:{stack.config.gateway_port}"
    async with signed_in(gateway, "admin@test.com", "admin123") as client:
        yield client


@pytest.fixture
async def user(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    gateway = f"http://127.0.0.1:{stack.config.gateway_port}"
    async with signed_in(gateway, "user@test.com", "user123") as client:
        yield client


async def queue_named(client: httpx.AsyncClient, name: str, **settings: Any) -> dict[str, Any]:
    """The caller's own project's queue ``name`` with ``settings`` (created if missing)."""
    found = (await client.get("/api/queues", params={"name": name})).json()["items"]
    if not found:
        created = await client.post("/api/queues", json={"name": name, **settings})
        assert created.status_code == 201, created.text
        return dict(created.json())
    changed = await client.patch(f"/api/queues/{found[0]['id']}", json=settings)
    assert changed.status_code == 200, changed.text
    return dict(changed.json())


async def submit_batch(client: httpx.AsyncClient, count: int, **payload: Any) -> list[str]:
    jobs = [
        {"type": "simulate", "priority": 2, "payload": {**HALF_SECOND, **payload}}
        for _ in range(count)
    ]
    answer = await client.post("/api/batches", json={"jobs": jobs})
    assert answer.status_code == 202, answer.text
    return [str(job_id) for job_id in answer.json()["jobIds"]]


async def job(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    answer = await client.get(f"/api/jobs/{job_id}")
    return dict(answer.json()) if answer.status_code == 200 else {}


async def all_finished(
    client: httpx.AsyncClient, ids: list[str], timeout: float
) -> list[dict[str, Any]]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        jobs = [await job(client, job_id) for job_id in ids]
        if all(j.get("status") in ("succeeded", "dead", "cancelled") for j in jobs):
            return jobs
        assert asyncio.get_running_loop().time() < deadline, [j.get("status") for j in jobs]
        await asyncio.sleep(0.5)


async def some_running(client: httpx.AsyncClient, ids: list[str]) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + 60
    while asyncio.get_running_loop().time() < deadline:
        for job_id in ids:
            found = await job(client, job_id)
            if found.get("status") == "running" and found.get("workerId"):
                return found
        await asyncio.sleep(0.1)
    raise AssertionError("no job of the batch ever ran")


async def test_a_limit_of_three_holds_across_replicas_while_a_worker_is_killed(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    queue = await queue_named(admin, "default", maxConcurrency=LIMIT)
    await asyncio.sleep(1.2)  # each relay looks at most once a second whether a queue is limited
    database = await asyncpg.connect(stack.config.database_url)
    samples: list[int] = []
    sampling = True

    async def sample() -> None:
        while sampling:
            samples.append(
                await database.fetchval(
                    "SELECT count(*) FROM jobs WHERE project_id = $1 AND queue = 'default' "
                    "AND status = 'running'",
                    uuid.UUID(queue["projectId"]),
                )
            )
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    try:
        ids = await submit_batch(admin, 60)
        running = await some_running(admin, ids)
        victim_id = running["workerId"]
        victim = worker_service(stack, victim_id)
        process = stack.services[victim].process
        assert process is not None
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        jobs = await all_finished(admin, ids, timeout=150)
    finally:
        sampling = False
        await sampler
        await database.close()
        stack.start_service(victim)
    assert max(samples) == LIMIT, max(samples)
    assert [j["status"] for j in jobs] == ["succeeded"] * len(ids)
    twice = [j for j in jobs if len(j["attempts"]) > 1]
    assert all(j["attempts"][0]["workerId"] == victim_id for j in twice), twice
    assert len(twice) <= LIMIT


async def test_a_paused_queue_starts_nothing_until_resumed_and_another_project_s_goes_on(
    stack: Stack, admin: httpx.AsyncClient, user: httpx.AsyncClient
) -> None:
    await asyncio.to_thread(stack.wait_ready, 60.0)
    queue = await queue_named(admin, "default", maxConcurrency=None)
    paused = await admin.post(f"/api/queues/{queue['id']}/pause")
    assert paused.json()["paused"] is True
    ids = await submit_batch(admin, 10)
    others = await submit_batch(user, 3)  # the user's own project's default queue
    finished = await all_finished(user, others, timeout=60)
    assert [j["status"] for j in finished] == ["succeeded"] * len(others)
    waiting = [await job(admin, job_id) for job_id in ids]
    assert [j["status"] for j in waiting] == ["queued"] * len(ids)
    assert (await admin.get(f"/api/queues/{queue['id']}")).json()["waiting"] == len(ids)

    resumed = await admin.post(f"/api/queues/{queue['id']}/resume")
    assert resumed.json()["paused"] is False
    jobs = await all_finished(admin, ids, timeout=60)
    assert [(j["status"], len(j["attempts"])) for j in jobs] == [("succeeded", 1)] * len(ids)


async def test_a_job_names_its_queue_which_its_first_job_creates(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    """``queue`` in the submission: the job runs in that queue of its project (created with
    no limits by its first job) on a worker serving its type, though none consumes the
    queue's own lane."""
    answer = await admin.post(
        "/api/jobs",
        json={"type": "simulate", "priority": 2, "payload": HALF_SECOND, "queue": "reports"},
    )
    assert answer.status_code == 202, answer.text
    jobs = await all_finished(admin, [answer.json()["jobId"]], timeout=60)
    assert [(j["status"], len(j["attempts"])) for j in jobs] == [("succeeded", 1)]
    created = (await admin.get("/api/queues", params={"name": "reports"})).json()["items"]
    assert [(q["name"], q["createdBy"], q["maxConcurrency"]) for q in created] == [
        ("reports", "first job", None)
    ]
    refused = await admin.post(
        "/api/jobs", json={"type": "simulate", "priority": 2, "payload": {}, "queue": "No Such"}
    )
    assert (refused.status_code, refused.json()["details"][0]["field"]) == (422, "queue")


async def test_a_concurrency_key_runs_one_job_per_value_at_a_time(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    """40 jobs over 4 values of the payload's ``seed``, one in flight per value: sampled from
    the database every 50 ms, never two of one value running at once."""
    queue = await queue_named(
        admin,
        "default",
        maxConcurrency=None,
        rateLimit=None,
        concurrencyKey={"field": "seed", "limit": 1},
    )
    await asyncio.sleep(1.2)
    database = await asyncpg.connect(stack.config.database_url)
    most: dict[str, int] = {}
    sampling = True

    async def sample() -> None:
        while sampling:
            for seed, running in await database.fetch(
                "SELECT payload->>'seed', count(*) FROM jobs WHERE project_id = $1 "
                "AND queue = 'default' AND status = 'running' GROUP BY 1",
                uuid.UUID(queue["projectId"]),
            ):
                most[seed] = max(most.get(seed, 0), running)
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    try:
        jobs = [
            {"type": "simulate", "priority": 2, "payload": {**QUICK, "seed": n % 4}}
            for n in range(40)
        ]
        answer = await admin.post("/api/batches", json={"jobs": jobs})
        assert answer.status_code == 202, answer.text
        finished = await all_finished(admin, answer.json()["jobIds"], timeout=120)
    finally:
        sampling = False
        await sampler
        await database.close()
        await queue_named(admin, "default", concurrencyKey=None)
    assert [j["status"] for j in finished] == ["succeeded"] * 40
    assert most == {"0": 1, "1": 1, "2": 1, "3": 1}


async def test_a_rate_limited_queue_starts_its_rate_across_replicas(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    """20 jobs/s on two scheduler replicas: over the first ten seconds of starts, within 10 %
    of 200 (the bucket's burst of 10 included)."""
    await queue_named(
        admin,
        "default",
        maxConcurrency=None,
        concurrencyKey=None,
        rateLimit={"limit": 20, "per": "second"},
    )
    await asyncio.sleep(1.2)
    try:
        ids = await submit_batch(admin, 260, minSeconds=0, maxSeconds=0)
        finished = await all_finished(admin, ids, timeout=120)
    finally:
        await queue_named(admin, "default", rateLimit=None)
    assert [j["status"] for j in finished] == ["succeeded"] * len(ids)
    starts = sorted(datetime.fromisoformat(j["startedAt"]) for j in finished)
    first = starts[0]
    within_ten = sum(1 for at in starts if (at - first).total_seconds() < 10)
    assert 180 <= within_ten <= 220, within_ten


FLOOD = 5_000
NOOP = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}
# The flood's jobs take a quarter second each: the workers' 30 medium slots drain at most 120
# a second, so thousands still wait when the single job arrives however fast or slow this
# machine submits them (no-op jobs drained as fast as a loaded machine accepted them).
FLOOD_JOB = {**NOOP, "minSeconds": 0.25, "maxSeconds": 0.25}


async def test_a_flood_of_one_project_delays_another_project_s_job_by_a_window_not_its_length(
    stack: Stack, admin: httpx.AsyncClient, user: httpx.AsyncClient
) -> None:
    """Fair dispatch (point 3): the admin's project submits 5,000 short jobs, then the user's
    project one, all of medium priority (one ready queue). The broker holds a window of the
    flood, the rest waits in the outbox, and the single job goes with the next dispatches:
    of the flood's jobs not started when the scheduler recorded it (``queued_at``: its
    submission came through the submission service behind the flood's), at most the bound
    docs/flow-control.md states start before it (two relays' windows and the workers'
    prefetch), not the thousands still waiting: fewer than start after it."""
    await queue_named(admin, "default", maxConcurrency=None, rateLimit=None, concurrencyKey=None)
    flood: list[str] = []
    for _ in range(FLOOD // 1_000):
        jobs = [{"type": "simulate", "priority": 2, "payload": FLOOD_JOB} for _ in range(1_000)]
        answer = await admin.post("/api/batches", json={"jobs": jobs})
        assert answer.status_code == 202, answer.text
        flood += [str(job_id) for job_id in answer.json()["jobIds"]]
    accepted = await user.post(
        "/api/jobs", json={"type": "simulate", "priority": 2, "payload": NOOP}
    )
    assert accepted.status_code == 202, accepted.text
    single = accepted.json()["jobId"]
    (done,) = await all_finished(user, [single], timeout=120)
    database = await asyncpg.connect(stack.config.database_url)
    try:
        row = await database.fetchrow(
            "SELECT created_at, queued_at, started_at FROM jobs WHERE id = $1", uuid.UUID(single)
        )
        ahead, behind = await database.fetchrow(
            "SELECT count(*) FILTER (WHERE started_at < $2), count(*) FILTER (WHERE "
            "started_at IS NULL OR started_at > $2) FROM jobs WHERE id = ANY($1::uuid[]) AND "
            "(started_at IS NULL OR started_at > $3)",
            [uuid.UUID(job_id) for job_id in flood],
            row["started_at"],
            row["queued_at"],
        )
        finished = await all_finished_in_database(database, flood, timeout=180)
        re_runs = await database.fetch(
            "SELECT e.job_id, e.attempt, e.from_status, e.to_status, e.reason, e.at "
            "FROM job_events e JOIN jobs j ON j.id = e.job_id "
            "WHERE j.id = ANY($1::uuid[]) AND j.attempt > 1 ORDER BY e.job_id, e.id",
            [uuid.UUID(job_id) for job_id in flood],
        )
    finally:
        await database.close()
    # Two relays' windows and three workers' prefetch from the recording's commit; queued_at
    # is its transaction's start, and the flood's jobs started meanwhile count too: a relay
    # batch of slack (SCHEDULER_RELAY_BATCH_SIZE).
    bound = 2 * WINDOW + 3 * MEDIUM_PREFETCH + 500
    recorded = (row["queued_at"] - row["created_at"]).total_seconds()
    print(
        f"single job recorded {recorded:.2f} s after its acceptance; flood jobs started after "
        f"that and ahead of it: {ahead} (bound {bound}); behind it: {behind}"
    )
    assert done["status"] == "succeeded"
    # First come, first served would start all the flood's jobs waiting before it.
    assert ahead + behind > bound, f"too little of the flood left to measure: {ahead + behind}"
    assert ahead <= bound, (ahead, behind)
    assert finished == {("succeeded", 1): FLOOD}, [tuple(event) for event in re_runs]


async def all_finished_in_database(
    database: asyncpg.Connection, ids: list[str], timeout: float
) -> dict[tuple[str, int], int]:
    """Once none of ``ids`` is unfinished: how many ended in each (status, attempts)."""
    deadline = asyncio.get_running_loop().time() + timeout
    keys = [uuid.UUID(job_id) for job_id in ids]
    while True:
        rows = await database.fetch(
            "SELECT status, attempt, count(*) FROM jobs WHERE id = ANY($1::uuid[]) "
            "GROUP BY status, attempt",
            keys,
        )
        counts = {(row["status"], row["attempt"]): row["count"] for row in rows}
        if all(status in ("succeeded", "dead", "cancelled") for status, _ in counts):
            return counts
        assert asyncio.get_running_loop().time() < deadline, counts
        await asyncio.sleep(0.5)


async def own_project(client: httpx.AsyncClient) -> str:
    """The caller's own default project (its queues are created there)."""
    return str((await queue_named(client, "default"))["projectId"])


async def set_quotas(client: httpx.AsyncClient, project: str, **quotas: int | None) -> None:
    answer = await client.put(f"/api/project-flow/{project}", json=quotas)
    assert answer.status_code == 200, answer.text
    # The submission service asks the scheduler again within SUBMISSION_PROJECT_QUOTA_IDLE_SECONDS.
    await asyncio.sleep(QUOTA_IDLE_SECONDS + 0.5)


async def test_a_project_s_quotas_refuse_with_429_and_retry_after_never_half_a_batch(
    stack: Stack, user: httpx.AsyncClient
) -> None:
    """Point 4: the user's project may have 3 jobs waiting, then 3 submitted a day; past
    either a batch is refused whole (429 too_many_requests, Retry-After) and none of its jobs
    exists, through the gateway, the submission service and the scheduler's count."""
    project = await own_project(user)
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    waiting = {"type": "simulate", "priority": 2, "payload": NOOP, "runAt": later}
    await set_quotas(user, project, maxWaiting=3)
    accepted = await user.post("/api/batches", json={"jobs": [waiting, waiting]})
    assert accepted.status_code == 202, accepted.text
    refused = await user.post("/api/batches", json={"jobs": [waiting, waiting]})
    assert refused.status_code == 429, refused.text
    assert (refused.json()["error"], refused.headers["Retry-After"]) == ("too_many_requests", "5")
    deadline = asyncio.get_running_loop().time() + 30
    while True:  # the accepted batch reaches the scheduler; nothing of the refused one does
        listed = (await user.get("/api/jobs", params={"status": "scheduled"})).json()["items"]
        if len(listed) >= 2 or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)
    listed = (await user.get("/api/jobs", params={"status": "scheduled"})).json()["items"]
    assert sorted(j["jobId"] for j in listed) == sorted(accepted.json()["jobIds"])
    for job_id in accepted.json()["jobIds"]:
        assert (await user.post(f"/api/jobs/{job_id}/cancel")).status_code in (200, 202)
    await set_quotas(user, project, maxWaiting=None, maxSubmittedPerDay=3)
    single = await user.post("/api/jobs", json={"type": "simulate", "priority": 2, "payload": NOOP})
    assert single.status_code == 202, single.text
    over = await user.post("/api/batches", json={"jobs": [{**waiting, "runAt": None}] * 3})
    assert over.status_code == 429, over.text
    assert 1 <= int(over.headers["Retry-After"]) <= 86_400
    await set_quotas(user, project, maxSubmittedPerDay=None)
    # The day's usage (folded every 2 s) counts the jobs accepted and the single one done.
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        usage = (await user.get("/api/usage", params={"projectId": project})).json()
        folded = usage["totals"]["succeeded"] >= 1
        if folded or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.5)
    today = [d for d in usage["items"] if d["day"] == datetime.now(UTC).date().isoformat()]
    assert today and today[0]["submitted"] >= 3 and today[0]["succeeded"] >= 1, usage


async def registered(gateway: str) -> str:
    """A new user of this test's own: its personal project holds only what the test makes."""
    email = f"most-running-{uuid.uuid4().hex[:10]}@example.com"
    async with httpx.AsyncClient(base_url=gateway, timeout=10) as http:
        answer = await http.post("/auth/register", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 202, answer.text
    return email


async def test_a_project_s_most_running_holds_across_its_queues_replicas_and_workers(
    stack: Stack,
) -> None:
    """docs/flow-control.md, "Most running": a project limited to 3 jobs in flight, 40 jobs of
    0.5 s over two of its queues (neither limited), three workers and two scheduler replicas:
    its running jobs, sampled every 50 ms from the database, never exceed 3, and every job
    succeeds on its first attempt."""
    gateway = f"http://127.0.0.1:{stack.config.gateway_port}"
    email = await registered(gateway)
    async with signed_in(gateway, email, PASSWORD) as client:
        project = await own_project(client)
        answer = await client.put(f"/api/project-flow/{project}", json={"maxRunning": LIMIT})
        assert answer.status_code == 200, answer.text
        assert answer.json()["maxRunning"] == LIMIT
        await asyncio.sleep(1.2)  # each relay reads which projects are limited every 0.25 s
        database = await asyncpg.connect(stack.config.database_url)
        samples: list[int] = []
        sampling = True

        async def sample() -> None:
            while sampling:
                samples.append(
                    await database.fetchval(
                        "SELECT count(*) FROM jobs WHERE project_id = $1 AND status = 'running'",
                        uuid.UUID(project),
                    )
                )
                await asyncio.sleep(0.05)

        sampler = asyncio.create_task(sample())
        try:
            jobs = [
                {"type": "simulate", "priority": 2, "payload": HALF_SECOND, "queue": queue}
                for queue in ("default", "reports") * 20
            ]
            batch = await client.post("/api/batches", json={"jobs": jobs})
            assert batch.status_code == 202, batch.text
            ids = [str(job_id) for job_id in batch.json()["jobIds"]]
            finished = await all_finished(client, ids, timeout=150)
            sampling = False
            await sampler
            queues = await database.fetch(
                "SELECT DISTINCT queue FROM jobs WHERE id = ANY($1::uuid[])", ids
            )
        finally:
            sampling = False
            await sampler
            await database.close()
    assert max(samples) == LIMIT, max(samples)
    assert [j["status"] for j in finished] == ["succeeded"] * len(ids)
    assert {len(j["attempts"]) for j in finished} == {1}
    assert {row["queue"] for row in queues} == {"default", "reports"}
