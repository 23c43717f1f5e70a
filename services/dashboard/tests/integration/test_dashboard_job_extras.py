"""Issue 3 fields on jobs: dependencies, retry policy, cancel marks, and the log lines."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from jobs_common.jobstore import job_dependencies, job_logs

pytestmark = pytest.mark.integration


async def test_dependencies_policy_and_cancel_fields(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    parent_ok = await job_factory.job(status="succeeded")
    parent_missing = uuid.uuid4()  # not recorded yet (messages can overtake)
    child = await job_factory.job(
        status="running",
        run_at=base,
        retry_policy={
            "strategy": "linear",
            "base_delay_ms": 500,
            "multiplier": 1.0,
            "max_delay_ms": 9000,
            "jitter": False,
        },
        cancel_requested_at=base + timedelta(minutes=3),
        cancel_requested_by=auth.user_email,
        lost_count=1,
    )
    for parent in (parent_ok, parent_missing):
        await job_factory.insert(job_dependencies, job_id=child, depends_on=parent)

    detail = (await client.get(f"/api/jobs/{child}", headers=auth.user)).json()
    assert sorted(detail["dependsOn"]) == sorted([str(parent_ok), str(parent_missing)])
    assert {(p["jobId"], p["status"]) for p in detail["parents"]} == {
        (str(parent_ok), "succeeded"),
        (str(parent_missing), None),
    }
    assert detail["retryPolicy"] == {
        "strategy": "linear",
        "baseDelayMs": 500,
        "multiplier": 1.0,
        "maxDelayMs": 9000,
        "jitter": False,
    }
    assert detail["cancelRequestedAt"].startswith("2024-05-01T12:03:00")
    assert detail["cancelRequestedBy"] == auth.user_email
    assert detail["runAt"].startswith("2024-05-01T12:00:00")
    assert detail["lostCount"] == 1
    assert {"queuedAt", "deadlineAt", "scheduleId", "batchId"} <= set(detail)

    listed = (await client.get("/api/jobs", params={"status": "running"}, headers=auth.user)).json()
    [item] = listed["items"]
    assert sorted(item["dependsOn"]) == sorted([str(parent_ok), str(parent_missing)])
    assert item["retryPolicy"]["baseDelayMs"] == 500
    assert "parents" not in item
    plain = (await client.get(f"/api/jobs/{parent_ok}", headers=auth.user)).json()
    assert (plain["dependsOn"], plain["parents"], plain["retryPolicy"]) == ([], [], None)


async def test_job_filters_by_schedule_and_batch_ids(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    schedule_id, batch_id = uuid.uuid4(), uuid.uuid4()
    scheduled = await job_factory.job(schedule_id=schedule_id)
    batched = await job_factory.job(batch_id=batch_id)
    await job_factory.job()
    by_schedule = await client.get(
        "/api/jobs", params={"scheduleId": str(schedule_id)}, headers=auth.user
    )
    assert [i["jobId"] for i in by_schedule.json()["items"]] == [str(scheduled)]
    by_batch = await client.get("/api/jobs", params={"batchId": str(batch_id)}, headers=auth.user)
    assert [i["jobId"] for i in by_batch.json()["items"]] == [str(batched)]
    bad = await client.get("/api/jobs", params={"batchId": "x"}, headers=auth.user)
    assert bad.status_code == 422
    assert bad.json()["details"][0]["field"] == "batchId"


async def test_logs_are_paged_by_after_id(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(status="running")
    other_job = await job_factory.job(status="running")
    for i in range(5):
        await job_factory.insert(
            job_logs,
            job_id=job_id,
            attempt=1 + i // 3,
            worker_id="w-1",
            level="warning" if i == 4 else "info",
            message=f"line {i}",
            at=job_factory.base_time + timedelta(seconds=i),
            message_id=uuid.uuid4(),
        )
    await job_factory.insert(
        job_logs,
        job_id=other_job,
        attempt=1,
        worker_id="w-2",
        level="info",
        message="elsewhere",
        at=job_factory.base_time,
        message_id=uuid.uuid4(),
    )
    first = (
        await client.get(f"/api/jobs/{job_id}/logs", params={"limit": 2}, headers=auth.user)
    ).json()
    assert [line["message"] for line in first["items"]] == ["line 0", "line 1"]
    line = first["items"][0]
    assert line == {
        "id": line["id"],
        "attempt": 1,
        "workerId": None,  # worker internals are for admins
        "level": "info",
        "message": "line 0",
        "at": line["at"],
    }
    as_admin = await client.get(f"/api/jobs/{job_id}/logs", headers=auth.admin)
    assert as_admin.json()["items"][0]["workerId"] == "w-1"
    assert first["nextAfterId"] == first["items"][1]["id"]
    rest = (
        await client.get(
            f"/api/jobs/{job_id}/logs",
            params={"afterId": first["nextAfterId"], "limit": 500},
            headers=auth.user,
        )
    ).json()
    assert [(x["message"], x["attempt"], x["level"]) for x in rest["items"]] == [
        ("line 2", 1, "info"),
        ("line 3", 2, "info"),
        ("line 4", 2, "warning"),
    ]
    end = (
        await client.get(
            f"/api/jobs/{job_id}/logs", params={"afterId": rest["nextAfterId"]}, headers=auth.user
        )
    ).json()
    assert end == {"items": [], "nextAfterId": rest["nextAfterId"]}
    hidden = await client.get(f"/api/jobs/{job_id}/logs", headers=auth.other)
    assert hidden.status_code == 404
    assert (await client.get(f"/api/jobs/{job_id}/logs", headers=auth.admin)).status_code == 200
    too_many = await client.get(
        f"/api/jobs/{job_id}/logs", params={"limit": 501}, headers=auth.user
    )
    assert too_many.status_code == 422
    assert too_many.json()["details"][0]["field"] == "limit"


async def test_a_job_lists_the_children_its_reader_may_see(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    parent = await job_factory.job(status="succeeded")
    mine = [
        await job_factory.job(status=s, created_at=base + timedelta(seconds=i))
        for i, s in enumerate(("queued", "blocked"))
    ]
    theirs = await job_factory.job(status="queued", submitted_by=auth.other_email)
    for child in (*mine, theirs):
        await job_factory.insert(job_dependencies, job_id=child, depends_on=parent)

    detail = (await client.get(f"/api/jobs/{parent}", headers=auth.user)).json()
    assert [(c["jobId"], c["status"]) for c in detail["children"]] == [
        (str(mine[0]), "queued"),
        (str(mine[1]), "blocked"),
    ]
    assert detail["childrenTotal"] == 2
    assert {c["type"] for c in detail["children"]} == {"echo"}
    admin = (await client.get(f"/api/jobs/{parent}", headers=auth.admin)).json()
    assert admin["childrenTotal"] == 3
    leaf = (await client.get(f"/api/jobs/{mine[0]}", headers=auth.user)).json()
    assert (leaf["children"], leaf["childrenTotal"]) == ([], 0)


async def test_the_series_counts_jobs_by_creation_window_and_outcome(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    step = timedelta(minutes=10)
    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    now = datetime.now(UTC)
    last = epoch + ((now - epoch) // step) * step
    created = {
        "succeeded": [last + timedelta(seconds=1), last - step + timedelta(seconds=5)],
        "dead": [last - step + timedelta(seconds=7)],
        "running": [last + timedelta(seconds=2)],
        "cancelled": [last - 3 * step],  # older than the three windows asked for
    }
    for status, times in created.items():
        for at in times:
            await job_factory.job(status=status, created_at=at)
    await job_factory.job(status="succeeded", created_at=last, submitted_by=auth.other_email)

    answer = await client.get(
        "/api/jobs/analytics/series",
        params={"bucketMinutes": 10, "buckets": 3},
        headers=auth.user,
    )
    assert answer.status_code == 200, answer.text
    series = answer.json()
    assert series["bucketMinutes"] == 10
    rows = [
        (b["created"], b["succeeded"], b["dead"], b["cancelled"], b["unfinished"])
        for b in series["buckets"]
    ]
    assert rows == [(0, 0, 0, 0, 0), (2, 1, 1, 0, 0), (2, 1, 0, 0, 1)]
    starts = [datetime.fromisoformat(b["start"]) for b in series["buckets"]]
    assert starts == [last - 2 * step, last - step, last]
    admin = await client.get(
        "/api/jobs/analytics/series",
        params={"bucketMinutes": 10, "buckets": 3},
        headers=auth.admin,
    )
    assert admin.json()["buckets"][-1]["created"] == 3
    refused = await client.get(
        "/api/jobs/analytics/series", params={"buckets": 0}, headers=auth.user
    )
    assert refused.status_code == 422


async def test_a_job_waiting_for_a_worker_of_its_type_says_why(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    reason = "no live worker serves 'acc.reverse'"
    waiting = await job_factory.job(status="queued", waiting_reason=reason)
    ready = await job_factory.job(status="queued")
    # A reason left on a job that moved on says nothing about it now.
    running = await job_factory.job(status="running", waiting_reason=reason)

    async def why(job_id: uuid.UUID) -> Any:
        return (await client.get(f"/api/jobs/{job_id}", headers=auth.user)).json()["waitingReason"]

    assert await why(waiting) == reason
    assert await why(ready) is None
    assert await why(running) is None
