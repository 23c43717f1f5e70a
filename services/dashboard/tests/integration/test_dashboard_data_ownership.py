"""Data stays with its owner: for every family of data the dashboard serves (job detail with
its result and timeline, log lines, listings, analytics, batches, dead letters, schedules) a
user who asks for another user's gets 404 or a list without it, never the data; and what a
user reads of their own jobs names no worker (host name, pid) and no other person's email."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jobs_common.jobstore import batches, job_logs, schedules

pytestmark = pytest.mark.integration

SECRET_RESULT = {"messageId": "<job-secret@example.org>", "to": "private@other.example"}
WORKER = "build-host-7-4711-1a2b3c4d"  # host name, pid, random suffix


async def others_job(job_factory: Any, auth: Any, **overrides: Any) -> uuid.UUID:
    """A finished job of the other user, with everything a job can have."""
    job_id: uuid.UUID = await job_factory.job(
        submitted_by=auth.other_email,
        status="dead",
        result=SECRET_RESULT,
        last_error="secret failure",
        worker_id=WORKER,
        **overrides,
    )
    await job_factory.attempt(job_id, 1, worker_id=WORKER, error="secret failure")
    await job_factory.event(job_id, from_status="queued", to_status="running", reason="secret")
    await job_factory.insert(
        job_logs,
        job_id=job_id,
        attempt=1,
        worker_id=WORKER,
        level="info",
        message="secret line",
        at=job_factory.base_time,
        message_id=uuid.uuid4(),
    )
    return job_id


def never_leaks(response: httpx.Response) -> None:
    assert "secret" not in response.text
    assert WORKER not in response.text


async def test_job_detail_result_and_timeline(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await others_job(job_factory, auth)
    response = await client.get(f"/api/jobs/{job_id}", headers=auth.user)
    assert response.status_code == 404
    never_leaks(response)
    mine = (await client.get(f"/api/jobs/{job_id}", headers=auth.other)).json()
    assert mine["result"] == SECRET_RESULT


async def test_log_lines(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    job_id = await others_job(job_factory, auth)
    for params in ({}, {"afterId": 0, "limit": 500}):
        response = await client.get(f"/api/jobs/{job_id}/logs", params=params, headers=auth.user)
        assert response.status_code == 404
        never_leaks(response)
    owner = (await client.get(f"/api/jobs/{job_id}/logs", headers=auth.other)).json()
    assert [line["message"] for line in owner["items"]] == ["secret line"]


async def test_job_listing(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    await others_job(job_factory, auth)
    mine = await job_factory.job(status="queued")
    listed = await client.get("/api/jobs", params={"status": "dead,queued"}, headers=auth.user)
    assert [item["jobId"] for item in listed.json()["items"]] == [str(mine)]
    never_leaks(listed)
    narrowed = await client.get(
        "/api/jobs", params={"submittedBy": auth.other_email}, headers=auth.user
    )
    assert narrowed.status_code == 403
    never_leaks(narrowed)


async def test_analytics_and_series(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    now = datetime.now(UTC)
    await others_job(job_factory, auth, type="secret_type", created_at=now, finished_at=now)
    await job_factory.job(status="succeeded", type="echo", created_at=now, finished_at=now)
    analytics = await client.get("/api/jobs/analytics", headers=auth.user)
    body = analytics.json()
    assert (body["total"], body["countsByType"]) == (1, {"echo": 1})
    never_leaks(analytics)
    series = (await client.get("/api/jobs/analytics/series", headers=auth.user)).json()
    assert sum(bucket["created"] for bucket in series["buckets"]) == 1
    assert sum(bucket["dead"] for bucket in series["buckets"]) == 0
    everyone = (await client.get("/api/jobs/analytics", headers=auth.admin)).json()
    assert everyone["total"] == 2


async def test_batches(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    batch_id = uuid.uuid4()
    await job_factory.insert(batches, id=batch_id, submitted_by=auth.other_email, total=1)
    await others_job(job_factory, auth, batch_id=batch_id)
    assert (await client.get(f"/api/batches/{batch_id}", headers=auth.user)).status_code == 404
    assert (await client.get("/api/batches", headers=auth.user)).json()["items"] == []
    members = await client.get("/api/jobs", params={"batchId": str(batch_id)}, headers=auth.user)
    assert members.json()["items"] == []
    assert (await client.get(f"/api/batches/{batch_id}", headers=auth.other)).status_code == 200


async def test_dead_letters(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    job_id = await others_job(job_factory, auth)
    letter = await job_factory.dead_letter(
        job_id, last_error="secret failure", fingerprint="RuntimeError: secret failure"
    )
    for path in ("/api/dead-letters", "/api/dead-letters/groups"):
        response = await client.get(path, params={"status": "all"}, headers=auth.user)
        assert response.json()["items"] == []
        never_leaks(response)
    for method, path in (
        ("GET", f"/api/dead-letters/{letter}"),
        ("POST", f"/api/dead-letters/{letter}/requeue"),
        ("POST", f"/api/dead-letters/{letter}/discard"),
    ):
        response = await client.request(method, path, headers=auth.user)
        assert response.status_code == 404, (method, path)
        never_leaks(response)
    bulk = await client.post(
        "/api/dead-letters/bulk",
        json={"action": "discard", "dryRun": True, "selector": {"ids": [str(letter)]}},
        headers=auth.user,
    )
    assert (bulk.json()["matching"], bulk.json()["sample"]) == (0, [])
    discarded = await client.post(
        "/api/dead-letters/bulk",
        json={"action": "discard", "selector": {"ids": [str(letter)]}},
        headers=auth.user,
    )
    assert discarded.json()["count"] == 0
    owner = await client.get(f"/api/dead-letters/{letter}", headers=auth.other)
    assert owner.json()["resolvedAt"] is None  # untouched
    # The audit log: a user reads their own actions only.
    await client.post(f"/api/dead-letters/{letter}/discard", headers=auth.other)
    actions = await client.get("/api/dead-letters/actions", headers=auth.user)
    assert [a for a in actions.json()["items"] if a["action"] == "discard"] == []


async def test_schedules(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    schedule_id = uuid.uuid4()
    await job_factory.insert(
        schedules,
        id=schedule_id,
        name="secret schedule",
        cron="0 7 * * *",
        timezone="UTC",
        job_template={"type": "simulate", "priority": 1, "payload": {}},
        owner=auth.other_email,
    )
    assert (await client.get(f"/api/schedules/{schedule_id}", headers=auth.user)).status_code == 404
    listed = await client.get("/api/schedules", headers=auth.user)
    assert listed.json()["items"] == []
    never_leaks(listed)


# --- What a user reads of their own jobs ---------------------------------------------------


async def test_own_job_detail_names_no_worker_and_no_administrator(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    job_id = await job_factory.job(
        status="cancelled",
        worker_id=WORKER,
        last_error=f"worker {WORKER} went silent",
        cancel_requested_by=auth.admin_email,
    )
    await job_factory.attempt(job_id, 1, worker_id=WORKER, error=f"worker {WORKER} went silent")
    reasons = [
        f"started on {WORKER}",
        f"redelivered; taken over by {WORKER}",
        f"worker {WORKER} stopped renewing the lease",
        f"manual retry by {auth.admin_email}",
        f"retry by {auth.user_email}",  # the owner's own address stays
        f"cancelled by {auth.admin_email}",
    ]
    for index, reason in enumerate(reasons):
        await job_factory.event(
            job_id, to_status="running", reason=reason, at=base + timedelta(seconds=index)
        )

    response = await client.get(f"/api/jobs/{job_id}", headers=auth.user)
    assert response.status_code == 200, response.text
    # Nor a part of it (its host, its pid): "4711" alone also turns up in random uuids.
    assert WORKER not in response.text and "build-host" not in response.text
    assert "-4711-" not in response.text
    assert auth.admin_email not in response.text
    body = response.json()
    assert body["workerId"] is None
    assert body["cancelRequestedBy"] == "an administrator"
    assert body["lastError"] == "the worker went silent"
    assert body["attempts"][0]["workerId"] is None
    assert body["attempts"][0]["error"] == "the worker went silent"
    assert [entry["reason"] for entry in body["timeline"]] == [
        "started on a worker",
        "redelivered; taken over by a worker",
        "the worker stopped renewing the lease",
        "manual retry by an administrator",
        f"retry by {auth.user_email}",
        "cancelled by an administrator",
    ]
    listed = (await client.get("/api/jobs", headers=auth.user)).json()["items"]
    assert [item["lastError"] for item in listed] == ["the worker went silent"]

    # Admins read everything as written.
    admin = (await client.get(f"/api/jobs/{job_id}", headers=auth.admin)).json()
    assert admin["workerId"] == WORKER
    assert admin["cancelRequestedBy"] == auth.admin_email
    assert [entry["reason"] for entry in admin["timeline"]] == reasons


async def test_own_dead_letters_group_and_filter_on_what_the_owner_reads(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    # Two lost leases on two hosts: two fingerprints for an admin, one for the owner.
    letters = []
    for host in ("alpha-<n>-<n>abc", "beta-<n>-<n>def"):
        job_id = await job_factory.job(status="dead")
        letters.append(
            await job_factory.dead_letter(
                job_id,
                reason="lease_expired",
                last_error=f"worker {host.replace('<n>', '9')} went silent",
                last_error_class="LeaseExpired",
                fingerprint=f"LeaseExpired: worker {host} went silent",
                resolved_at=job_factory.base_time,
                resolved_by=auth.admin_email,
                resolution="discarded",
            )
        )
    owner_fingerprint = "LeaseExpired: the worker went silent"

    groups = (
        await client.get("/api/dead-letters/groups", params={"status": "all"}, headers=auth.user)
    ).json()["items"]
    assert [(g["fingerprint"], g["count"], g["sampleError"]) for g in groups] == [
        (owner_fingerprint, 2, "the worker went silent")
    ]
    page = await client.get(
        "/api/dead-letters",
        params={"status": "all", "fingerprint": owner_fingerprint},
        headers=auth.user,
    )
    assert sorted(item["id"] for item in page.json()["items"]) == sorted(map(str, letters))
    assert "alpha" not in page.text and "beta" not in page.text
    item = page.json()["items"][0]
    assert (item["fingerprint"], item["resolvedBy"]) == (owner_fingerprint, "an administrator")
    one = (await client.get(f"/api/dead-letters/{letters[0]}", headers=auth.user)).json()
    assert one["lastError"] == "the worker went silent"

    admin_groups = (
        await client.get("/api/dead-letters/groups", params={"status": "all"}, headers=auth.admin)
    ).json()["items"]
    assert sorted(g["fingerprint"] for g in admin_groups) == [
        "LeaseExpired: worker alpha-<n>-<n>abc went silent",
        "LeaseExpired: worker beta-<n>-<n>def went silent",
    ]
