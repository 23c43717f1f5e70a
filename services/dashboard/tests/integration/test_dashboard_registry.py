"""Retry policies, the worker registry and batch progress."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from jobs_common.auth import Identity
from jobs_common.jobstore import batches, jobs, read_horizons, workers
from jobs_common.tenancy import OrgRole
from jobs_common.topology import HEARTBEAT, RESULTS

from .conftest import INTERNAL_TOKEN

pytestmark = pytest.mark.integration

POLICY = {
    "name": "gentle",
    "strategy": "linear",
    "baseDelayMs": 2000,
    "multiplier": 1.0,
    "maxDelayMs": 30000,
    "jitter": False,
    "maxAttempts": 6,
}


def scoped(email: str, project: uuid.UUID, role: OrgRole) -> dict[str, str]:
    """Headers as the gateway forwards them for a request naming ``project``."""
    identity = Identity(
        user_id=email,
        email=email,
        role="user",
        project_id=str(project),
        project_role=role,
        grants=((str(project), role),),
    )
    return identity.headers(INTERNAL_TOKEN)


async def test_admin_creates_shared_policies_everyone_lists_them(
    client: httpx.AsyncClient, auth: Any
) -> None:
    created = await client.post("/api/retry-policies", json=POLICY, headers=auth.admin)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body == {
        **POLICY,
        "projectId": None,  # the platform admin naming no project: shared by every project
        "createdBy": auth.admin_email,
        "createdAt": body["createdAt"],
    }
    second = {**POLICY, "name": "a-first", "strategy": "exponential", "multiplier": 3}
    second.pop("maxAttempts")
    assert (
        await client.post("/api/retry-policies", json=second, headers=auth.admin)
    ).status_code == 201
    listed = (await client.get("/api/retry-policies", headers=auth.user)).json()["items"]
    assert [p["name"] for p in listed] == ["a-first", "gentle"]
    assert listed[0]["maxAttempts"] is None
    assert listed[0]["multiplier"] == 3.0
    # Who made them is an admin's email: a user reads "an administrator", an admin the email.
    assert {p["createdBy"] for p in listed} == {"an administrator"}
    by_admin = (await client.get("/api/retry-policies", headers=auth.admin)).json()["items"]
    assert {p["createdBy"] for p in by_admin} == {auth.admin_email}


async def test_a_projects_policies_are_its_admins_to_store_and_its_members_to_read(
    client: httpx.AsyncClient, auth: Any
) -> None:
    team, elsewhere = uuid.uuid4(), uuid.uuid4()
    lead = scoped("lead@test.com", team, OrgRole.ADMIN)
    member = scoped("mia@test.com", team, OrgRole.MEMBER)
    stranger = scoped("sam@test.com", elsewhere, OrgRole.OWNER)
    refused = await client.post("/api/retry-policies", json=POLICY, headers=member)
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
    ours = await client.post("/api/retry-policies", json=POLICY, headers=lead)
    assert (ours.status_code, ours.json()["projectId"]) == (201, str(team))
    shared = {**POLICY, "name": "shared-one"}
    assert (await client.post("/api/retry-policies", json=shared, headers=auth.admin)).is_success
    # The same name in another project is another policy.
    theirs = await client.post("/api/retry-policies", json=POLICY, headers=stranger)
    assert (theirs.status_code, theirs.json()["projectId"]) == (201, str(elsewhere))

    async def names(headers: dict[str, str]) -> list[tuple[str, str | None]]:
        listed = (await client.get("/api/retry-policies", headers=headers)).json()["items"]
        return [(p["name"], p["projectId"]) for p in listed]

    assert await names(member) == [("gentle", str(team)), ("shared-one", None)]
    assert await names(stranger) == [("gentle", str(elsewhere)), ("shared-one", None)]


async def test_policy_rules(client: httpx.AsyncClient, auth: Any) -> None:
    viewer = scoped("vic@test.com", uuid.uuid4(), OrgRole.VIEWER)
    forbidden = await client.post("/api/retry-policies", json=POLICY, headers=viewer)
    assert forbidden.status_code == 403
    assert forbidden.json()["error"] == "forbidden"
    assert (
        await client.post("/api/retry-policies", json=POLICY, headers=auth.admin)
    ).status_code == 201
    duplicate = await client.post("/api/retry-policies", json=POLICY, headers=auth.admin)
    assert duplicate.status_code == 409
    assert duplicate.json()["error"] == "conflict"
    for bad, field in [
        ({"maxDelayMs": 10}, "maxDelayMs"),
        ({"multiplier": 0.9}, "multiplier"),
        ({"name": "Not A Slug"}, "name"),
        ({"strategy": "random"}, "strategy"),
        ({"maxAttempts": 21}, "maxAttempts"),
    ]:
        response = await client.post(
            "/api/retry-policies", json={**POLICY, "name": "other", **bad}, headers=auth.admin
        )
        assert response.status_code == 422, (bad, response.text)
        assert field in [d["field"] for d in response.json()["details"]]
    defaults = (await client.get("/api/retry-policies/defaults", headers=auth.user)).json()
    assert defaults == {
        "strategy": "exponential",
        "baseDelayMs": 1000,
        "multiplier": 2.0,
        "maxDelayMs": 60000,
        "jitter": True,
        "maxAttempts": None,
    }
    assert (await client.get("/api/retry-policies")).status_code == 401


async def add_worker(
    job_factory: Any, worker_id: str, age: timedelta, *, now: datetime | None = None, **extra: Any
) -> None:
    now = now or datetime.now(UTC)
    await job_factory.insert(
        workers,
        id=worker_id,
        hostname=f"host-{worker_id}",
        pid=100,
        version="1.2.3",
        queues=["jobs.ready.high", "jobs.ready.low"],
        concurrency=4,
        active_jobs=extra.pop("active_jobs", 1),
        started_at=now - timedelta(hours=3),
        last_heartbeat_at=now - age,
        **extra,
    )


async def add_horizon(
    job_factory: Any,
    replica_id: str,
    horizon: datetime,
    *,
    queue: str = HEARTBEAT,
    updated_at: datetime | None = None,
) -> None:
    """A scheduler replica's read horizon, as the scheduler records it (the dashboard only
    reads these rows)."""
    await job_factory.insert(
        read_horizons,
        replica_id=replica_id,
        queue=queue,
        horizon=horizon,
        updated_at=updated_at or datetime.now(UTC),
    )


async def test_workers_are_for_admins_only(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    """Host names, pids and versions (and worker ids, which embed them) are internals."""
    await add_worker(job_factory, "host-a-4711-1a2b3c4d", timedelta(seconds=1))
    refused = await client.get("/api/workers", headers=auth.user)
    assert refused.status_code == 403
    assert refused.json()["error"] == "forbidden"
    assert "host-a" not in refused.text
    assert (await client.get("/api/workers", headers=auth.admin)).status_code == 200


async def test_workers_alive_stopping_dead_and_hidden(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    await add_horizon(job_factory, "scheduler-a", datetime.now(UTC))  # reading, no lag
    await add_worker(job_factory, "w-dead", timedelta(minutes=5))
    await add_worker(job_factory, "w-alive", timedelta(seconds=1), active_jobs=3)
    await add_worker(job_factory, "w-stopping", timedelta(seconds=2), stopping=True)
    await add_worker(job_factory, "w-gone", timedelta(hours=2))
    response = await client.get("/api/workers", headers=auth.admin)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(w["id"], w["status"]) for w in body["items"]] == [
        ("w-alive", "alive"),
        ("w-stopping", "stopping"),
        ("w-dead", "dead"),
    ]
    assert body["counts"] == {"alive": 1, "quiet": 0, "stopping": 1, "dead": 1, "unknown": 0}
    alive = body["items"][0]
    assert alive == {
        "id": "w-alive",
        "hostname": "host-w-alive",
        "pid": 100,
        "version": "1.2.3",
        "queues": ["jobs.ready.high", "jobs.ready.low"],
        "concurrency": 4,
        "activeJobs": 3,
        "startedAt": alive["startedAt"],
        "lastHeartbeatAt": alive["lastHeartbeatAt"],
        "status": "alive",
        "quiet": False,
        "processed": 0,
        "failed": 0,
        "running": [],
    }
    live_only = await client.get(
        "/api/workers", params={"includeDeadForMinutes": 0}, headers=auth.admin
    )
    assert [w["id"] for w in live_only.json()["items"]] == ["w-alive", "w-stopping"]
    wide = await client.get(
        "/api/workers", params={"includeDeadForMinutes": 180}, headers=auth.admin
    )
    assert {w["id"] for w in wide.json()["items"]} == {"w-alive", "w-stopping", "w-dead", "w-gone"}
    bad = await client.get("/api/workers", params={"includeDeadForMinutes": -1}, headers=auth.admin)
    assert bad.status_code == 422


async def test_workers_are_judged_against_how_far_the_scheduler_read_heartbeats(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    """The scheduler is a minute behind (paused, or a backlog): its workers' last heartbeats
    are a minute old by the wall clock, yet alive; dead is only what is silent before the
    horizon. Issue 19: a paused scheduler made every healthy worker look dead."""
    now = datetime.now(UTC)
    horizon = now - timedelta(minutes=1)
    await add_horizon(job_factory, "scheduler-slow", horizon)
    await add_horizon(job_factory, "scheduler-fast", now)  # the smallest live horizon counts
    # Not vouching for anything: another queue, and a replica silent for ten minutes.
    await add_horizon(job_factory, "scheduler-slow", now - timedelta(hours=1), queue=RESULTS)
    await add_horizon(
        job_factory,
        "scheduler-gone",
        now - timedelta(hours=2),
        updated_at=now - timedelta(minutes=10),
    )
    await add_worker(job_factory, "w-behind", timedelta(seconds=3), now=horizon, active_jobs=2)
    await add_worker(job_factory, "w-silent", timedelta(seconds=30), now=horizon, active_jobs=2)
    await add_worker(job_factory, "w-draining", timedelta(seconds=9), now=horizon, stopping=True)

    body = (await client.get("/api/workers", headers=auth.admin)).json()
    assert [(w["id"], w["status"]) for w in body["items"]] == [
        ("w-behind", "alive"),
        ("w-draining", "stopping"),
        ("w-silent", "dead"),
    ]
    assert body["counts"] == {"alive": 1, "quiet": 0, "stopping": 1, "dead": 1, "unknown": 0}
    assert datetime.fromisoformat(body["heartbeatHorizon"]) == horizon

    # Dead within N minutes counts back from the horizon, not from now.
    live_only = await client.get(
        "/api/workers", params={"includeDeadForMinutes": 0}, headers=auth.admin
    )
    assert [w["id"] for w in live_only.json()["items"]] == ["w-behind", "w-draining"]


async def test_no_worker_is_judged_while_no_scheduler_reads_heartbeats(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    """No live reader of jobs.heartbeat (every replica stopped, or paused past the staleness
    limit): no heartbeat is applied, so an old last heartbeat says nothing about the worker."""
    now = datetime.now(UTC)
    await add_horizon(
        job_factory,
        "scheduler-paused",
        now - timedelta(minutes=5),
        updated_at=now - timedelta(minutes=5),
    )
    await add_horizon(job_factory, "scheduler-paused", now, queue=RESULTS)  # not heartbeats
    stopped = now - timedelta(minutes=5)  # about when the scheduler stopped reading
    await add_worker(job_factory, "w-a", timedelta(seconds=1), now=stopped)
    await add_worker(job_factory, "w-b", timedelta(seconds=2), now=stopped, stopping=True)
    await add_worker(job_factory, "w-long-gone", timedelta(hours=3), now=stopped)

    body = (await client.get("/api/workers", headers=auth.admin)).json()
    assert [(w["id"], w["status"]) for w in body["items"]] == [
        ("w-a", "unknown"),
        ("w-b", "unknown"),
    ]
    assert body["counts"] == {"alive": 0, "quiet": 0, "stopping": 0, "dead": 0, "unknown": 2}
    assert body["heartbeatHorizon"] is None

    # A replica reading heartbeats again (updated_at now) judges them against its horizon.
    await add_horizon(job_factory, "scheduler-back", stopped + timedelta(seconds=5))
    judged = (await client.get("/api/workers", headers=auth.admin)).json()
    assert [(w["id"], w["status"]) for w in judged["items"]] == [
        ("w-a", "alive"),
        ("w-b", "stopping"),
    ]


async def test_batch_progress(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    batch_id = uuid.uuid4()
    await job_factory.insert(batches, id=batch_id, submitted_by=auth.user_email, total=5)
    for status in ("succeeded", "succeeded", "dead", "running"):
        await job_factory.job(status=status, batch_id=batch_id)
    await job_factory.job(status="queued")  # not a member
    response = await client.get(f"/api/batches/{batch_id}", headers=auth.user)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["counts"]["succeeded"] == 2
    assert body["counts"]["queued"] == 0
    assert body == {
        "batchId": str(batch_id),
        "submittedBy": auth.user_email,
        "projectId": body["projectId"],
        "total": 5,
        "counts": body["counts"],
        "succeeded": 2,
        "failed": 1,
        "dead": 1,
        "cancelled": 0,
        "recorded": 4,
        "finished": False,
        "createdAt": body["createdAt"],
    }
    await job_factory.job(status="cancelled", batch_id=batch_id)
    members = await client.get("/api/jobs", params={"batchId": str(batch_id)}, headers=auth.user)
    running = [i["jobId"] for i in members.json()["items"] if i["status"] == "running"]
    assert members.json()["totalItems"] == 5
    assert {i["batchId"] for i in members.json()["items"]} == {str(batch_id)}
    assert len(running) == 1
    async with job_factory.engine.begin() as connection:
        await connection.execute(
            update(jobs).where(jobs.c.id == uuid.UUID(running[0])).values(status="succeeded")
        )
    done = (await client.get(f"/api/batches/{batch_id}", headers=auth.user)).json()
    assert (done["recorded"], done["succeeded"], done["cancelled"], done["finished"]) == (
        5,
        3,
        1,
        True,
    )
    assert (await client.get(f"/api/batches/{batch_id}", headers=auth.other)).status_code == 404
    assert (await client.get(f"/api/batches/{batch_id}", headers=auth.admin)).status_code == 200
    assert (await client.get(f"/api/batches/{uuid.uuid4()}", headers=auth.user)).status_code == 404


async def test_batches_are_listed_newest_first_with_their_progress(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    older, newer, theirs = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    for batch_id, owner, minutes in (
        (older, auth.user_email, 0),
        (newer, auth.user_email, 5),
        (theirs, auth.other_email, 9),
    ):
        await job_factory.insert(
            batches,
            id=batch_id,
            submitted_by=owner,
            total=3,
            created_at=base + timedelta(minutes=minutes),
        )
    for status in ("succeeded", "succeeded", "dead"):
        await job_factory.job(status=status, batch_id=older)
    await job_factory.job(status="running", batch_id=newer)

    page = (await client.get("/api/batches", headers=auth.user)).json()
    assert [b["batchId"] for b in page["items"]] == [str(newer), str(older)]
    assert (page["totalItems"], page["pageNumber"]) == (2, 1)
    new, old = page["items"]
    assert (old["succeeded"], old["dead"], old["recorded"], old["finished"]) == (2, 1, 3, True)
    assert (new["recorded"], new["counts"]["running"], new["finished"]) == (1, 1, False)

    second = (
        await client.get("/api/batches", params={"pageSize": 1, "pageNumber": 2}, headers=auth.user)
    ).json()
    assert [b["batchId"] for b in second["items"]] == [str(older)]
    everyone = (await client.get("/api/batches", headers=auth.admin)).json()
    assert [b["batchId"] for b in everyone["items"]] == [str(theirs), str(newer), str(older)]
