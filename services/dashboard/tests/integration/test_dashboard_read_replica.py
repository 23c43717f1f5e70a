"""DASHBOARD_DATABASE_READ_URL against real streaming replication (docs/scaling.md).

A primary and a hot standby of their own (replica_cluster.py), the job store migrated on the
primary with the scheduler's migrations and cloned per test there (the clone reaches the standby
through the WAL like any write). The standby's WAL replay is paused to tell the two apart: what
the dashboard shows while it is paused came from the server it read.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.db import async_url
from jobs_common.jobstore import job_attempts, job_events, jobs, outbox, retry_policies
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.service import create_app
from jobs_dashboard.settings import Settings
from jobs_testing.infra import free_port
from jobs_testing.waiting import eventually

from .replica_cluster import ReplicaCluster

pytestmark = pytest.mark.integration

TEMPLATE = "jobs_template"
POLICY = {
    "name": "replica-proof",
    "strategy": "fixed",
    "baseDelayMs": 1000,
    "multiplier": 1.0,
    "maxDelayMs": 1000,
    "jitter": False,
}


# --- The cluster: one per module, a fresh migrated database per test --------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[ReplicaCluster]:
    with ReplicaCluster() as started:
        yield started


async def admin_execute(url: str, sql: str) -> Any:
    connection = await asyncpg.connect(url)
    try:
        return await connection.fetchval(sql)
    finally:
        await connection.close()


async def wait_replayed(cluster: ReplicaCluster) -> None:
    """Until the standby has replayed everything the primary has written so far."""
    target = await admin_execute(cluster.primary_url(), "SELECT pg_current_wal_lsn()::text")

    async def replayed() -> bool:
        return bool(
            await admin_execute(
                cluster.standby_url(),
                f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn",
            )
        )

    await eventually(replayed, timeout=30, what="the standby to replay the primary's WAL")


@asynccontextmanager
async def replay_paused(cluster: ReplicaCluster) -> AsyncIterator[None]:
    """The standby's WAL replay paused (it still receives), resumed on the way out."""
    await admin_execute(cluster.standby_url(), "SELECT pg_wal_replay_pause()")

    async def paused() -> bool:
        state = await admin_execute(cluster.standby_url(), "SELECT pg_get_wal_replay_pause_state()")
        return bool(state == "paused")

    try:
        await eventually(paused, timeout=10, what="WAL replay to pause")
        yield
    finally:
        await admin_execute(cluster.standby_url(), "SELECT pg_wal_replay_resume()")


@pytest.fixture(scope="module")
async def replica_template(cluster: ReplicaCluster) -> str:
    from jobs_scheduler.migrate import upgrade_async

    await admin_execute(cluster.primary_url(), f'CREATE DATABASE "{TEMPLATE}"')
    await upgrade_async(cluster.primary_url(TEMPLATE))
    return TEMPLATE


@pytest.fixture
async def jobs_database_url(cluster: ReplicaCluster, replica_template: str) -> str:
    """Overrides the root fixture: this test's job store is on the primary (conftest's
    store_engine, job_factory and scheduler API write there), replayed on the standby."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    await admin_execute(cluster.primary_url(), f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    await wait_replayed(cluster)
    return cluster.primary_url(name)


@pytest.fixture
def standby_url(cluster: ReplicaCluster, jobs_database_url: str) -> str:
    return cluster.standby_url(jobs_database_url.rsplit("/", 1)[1])


@dataclass(frozen=True)
class Dashboard:
    client: httpx.AsyncClient
    reader: JobReader


@asynccontextmanager
async def dashboard(settings: Settings, read_url: str | None) -> AsyncIterator[Dashboard]:
    """The dashboard app (its lifespan run) with ``DASHBOARD_DATABASE_READ_URL=read_url``."""
    options = settings.model_copy(
        update={"database_read_url": None if read_url is None else async_url(read_url)}
    )
    app: FastAPI = create_app(options)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://dashboard") as client:
            yield Dashboard(client, app.state.reader)


async def listed_ids(client: httpx.AsyncClient, headers: dict[str, str]) -> set[str]:
    response = await client.get("/api/jobs", headers=headers)
    assert response.status_code == 200, response.text
    return {item["jobId"] for item in response.json()["items"]}


async def in_recovery(connection: Any) -> bool:
    return bool(await connection.scalar(text("SELECT pg_is_in_recovery()")))


# --- What goes where ---------------------------------------------------------------------------


async def test_listing_and_detail_answer_from_the_standby(
    cluster: ReplicaCluster, settings: Settings, standby_url: str, auth: Any, job_factory: Any
) -> None:
    first = str(await job_factory.job())
    await wait_replayed(cluster)
    async with dashboard(settings, standby_url) as app:
        assert await listed_ids(app.client, auth.admin) == {first}
        async with replay_paused(cluster):
            second = str(await job_factory.job())
            # On the primary, not yet replayed: the dashboard does not see it.
            assert await listed_ids(app.client, auth.admin) == {first}
            missing = await app.client.get(f"/api/jobs/{second}", headers=auth.admin)
            assert missing.status_code == 404
            found = await app.client.get(f"/api/jobs/{first}", headers=auth.admin)
            assert found.status_code == 200
            # The plumbing itself: snapshots on the standby, the rest on the primary.
            async with app.reader.snapshot() as connection:
                assert await in_recovery(connection)
            async with app.reader.transaction() as connection:
                assert not await in_recovery(connection)
            async with app.reader.engine.connect() as connection:
                assert not await in_recovery(connection)
        await wait_replayed(cluster)
        assert await listed_ids(app.client, auth.admin) == {first, second}
        detail = await app.client.get(f"/api/jobs/{second}", headers=auth.admin)
        assert detail.status_code == 200, detail.text
        assert detail.json()["jobId"] == second
        ready = await app.client.get("/ready")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {
            "database": True,
            "database_replica": True,
            "broker": True,
        }


async def test_writes_land_on_the_primary_and_show_after_replay(
    cluster: ReplicaCluster,
    settings: Settings,
    standby_url: str,
    auth: Any,
    job_factory: Any,
    store_engine: AsyncEngine,
) -> None:
    job_id = await job_factory.job(status="dead")
    dead_id = await job_factory.dead_letter(job_id)
    await wait_replayed(cluster)
    async with dashboard(settings, standby_url) as app, replay_paused(cluster):
        client = app.client
        # A named retry policy (the scheduler's internal API writes it): on the primary at
        # once, in the dashboard's list only after replay.
        created = await client.post("/api/retry-policies", json=POLICY, headers=auth.admin)
        assert created.status_code == 201, created.text
        async with store_engine.connect() as connection:
            names = set(await connection.scalars(select(retry_policies.c.name)))
        assert names == {POLICY["name"]}
        listed = (await client.get("/api/retry-policies", headers=auth.admin)).json()["items"]
        assert listed == []
        # A discard answers with the letter read back on the primary: resolved, though the
        # open-letter list (a snapshot, the standby) still shows it until replay.
        discarded = await client.post(f"/api/dead-letters/{dead_id}/discard", headers=auth.user)
        assert discarded.status_code == 200, discarded.text
        assert discarded.json()["resolution"] == "discarded"
        still_open = (await client.get("/api/dead-letters", headers=auth.user)).json()["items"]
        assert [item["id"] for item in still_open] == [str(dead_id)]
    await wait_replayed(cluster)
    async with dashboard(settings, standby_url) as app:
        listed = (await app.client.get("/api/retry-policies", headers=auth.admin)).json()["items"]
        assert [policy["name"] for policy in listed] == [POLICY["name"]]
        letters = (await app.client.get("/api/dead-letters", headers=auth.user)).json()["items"]
        assert letters == []


async def test_unset_every_read_is_the_primarys(
    cluster: ReplicaCluster, settings: Settings, auth: Any, job_factory: Any
) -> None:
    first = str(await job_factory.job())
    await wait_replayed(cluster)
    async with dashboard(settings, None) as app, replay_paused(cluster):
        second = str(await job_factory.job())
        assert await listed_ids(app.client, auth.admin) == {first, second}
        assert (await app.client.get(f"/api/jobs/{second}", headers=auth.admin)).status_code == 200
        async with app.reader.snapshot() as connection:
            assert not await in_recovery(connection)
        ready = await app.client.get("/ready")
        assert ready.json()["checks"] == {"database": True, "broker": True}


async def test_ready_fails_while_the_replica_is_away(settings: Settings) -> None:
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/jobs"
    async with dashboard(settings, nowhere) as app:
        ready = await app.client.get("/ready")
        assert ready.status_code == 503
        assert ready.json()["checks"] == {
            "database": True,
            "database_replica": False,
            "broker": True,
        }


# --- Replay lag under a write load -----------------------------------------------------------


JOBS = 10_000
BATCH = 100
MESSAGE = b"x" * 400  # about a JobDispatch's JSON


def job_row(job_id: uuid.UUID, now: datetime) -> dict[str, Any]:
    return {
        "id": job_id,
        "type": "simulate",
        "priority": 2,
        "payload": {"durationMs": 0},
        "submitted_by": "load@test.com",
        "status": "queued",
        "attempt": 1,
        "max_attempts": 3,
        "attempt_limit": 3,
        "timeout_seconds": 60,
        "trace_id": job_id.hex,
        "created_at": now,
        "updated_at": now,
    }


async def write_like_the_scheduler(engine: AsyncEngine, count: int) -> None:
    """Per job, roughly what the scheduler writes on a job's path, ``BATCH`` jobs per
    transaction as its consumers batch them: recorded (the job, its attempt, an event, a
    dispatch in the outbox), relayed (the outbox row deleted), running and succeeded (a status
    update and an event each)."""
    now = datetime.now(UTC)
    for start in range(0, count, BATCH):
        ids = [uuid.uuid4() for _ in range(min(BATCH, count - start))]

        def events(to_status: str, ids: list[uuid.UUID] = ids) -> list[dict[str, Any]]:
            return [
                {"job_id": i, "attempt": 1, "to_status": to_status, "reason": "load"} for i in ids
            ]

        async with engine.begin() as connection:
            await connection.execute(jobs.insert(), [job_row(i, now) for i in ids])
            await connection.execute(
                job_attempts.insert(),
                [{"job_id": i, "attempt": 1, "status": "queued"} for i in ids],
            )
            await connection.execute(job_events.insert(), events("queued"))
            await connection.execute(
                outbox.insert(),
                [
                    {
                        "routing_key": "jobs.ready.medium",
                        "job_id": i,
                        "message_id": uuid.uuid4(),
                        "message_type": "JobDispatch",
                        "trace_id": i.hex,
                        "body": MESSAGE,
                    }
                    for i in ids
                ],
            )
        async with engine.begin() as connection:
            await connection.execute(outbox.delete().where(outbox.c.job_id.in_(ids)))
        for status in ("running", "succeeded"):
            async with engine.begin() as connection:
                await connection.execute(
                    jobs.update().where(jobs.c.id.in_(ids)).values(status=status, updated_at=now)
                )
                await connection.execute(
                    job_attempts.update()
                    .where(job_attempts.c.job_id.in_(ids))
                    .values(status=status)
                )
                await connection.execute(job_events.insert(), events(status))


async def test_replay_lag_under_a_write_load(
    cluster: ReplicaCluster, store_engine: AsyncEngine, standby_url: str
) -> None:
    """Prints the figures docs/scaling.md quotes (run with -s); asserts only the catch-up."""
    await wait_replayed(cluster)
    wal_before = await admin_execute(cluster.primary_url(), "SELECT pg_current_wal_lsn()::text")
    samples: list[tuple[float, float]] = []  # (replay_lag seconds, bytes behind)
    done = asyncio.Event()

    async def sample() -> None:
        connection = await asyncpg.connect(cluster.primary_url())
        try:
            while not done.is_set():
                row = await connection.fetchrow(
                    "SELECT extract(epoch FROM replay_lag) AS lag, "
                    "pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn) AS behind "
                    "FROM pg_stat_replication"
                )
                if row is not None:
                    samples.append((float(row["lag"] or 0.0), float(row["behind"] or 0.0)))
                await asyncio.sleep(0.05)
        finally:
            await connection.close()

    sampler = asyncio.create_task(sample())
    started = time.perf_counter()
    await write_like_the_scheduler(store_engine, JOBS)
    written = time.perf_counter() - started
    await wait_replayed(cluster)
    caught_up = time.perf_counter() - started - written
    done.set()
    await sampler
    wal_bytes = await admin_execute(
        cluster.primary_url(), f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{wal_before}')"
    )
    lags = sorted(lag for lag, _ in samples)
    behind = max((b for _, b in samples), default=0.0)
    print(
        f"\nreplica lag: {JOBS} jobs written in {written:.2f} s ({JOBS / written:.0f} jobs/s), "
        f"WAL {float(wal_bytes) / JOBS:.0f} bytes per job; replay_lag p50 "
        f"{(lags[len(lags) // 2] if lags else 0) * 1000:.1f} ms, p99 "
        f"{(lags[int(len(lags) * 0.99)] if lags else 0) * 1000:.1f} ms, max "
        f"{(lags[-1] if lags else 0) * 1000:.1f} ms over {len(samples)} samples; at most "
        f"{behind / 1024:.0f} KiB behind; caught up {caught_up * 1000:.0f} ms after the last "
        "commit"
    )
    assert samples, "pg_stat_replication showed no standby"
    replicated = await admin_execute(
        standby_url, "SELECT count(*) FROM jobs WHERE status = 'succeeded'"
    )
    assert replicated == JOBS
