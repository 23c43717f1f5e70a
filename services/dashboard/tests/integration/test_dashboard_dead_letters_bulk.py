"""POST /api/dead-letters/bulk: dry run, discard, paced requeue, limits and visibility."""

import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import dead_letter_actions, dead_letters, job_events, jobs, outbox
from jobs_dashboard.settings import Settings

pytestmark = pytest.mark.integration

FINGERPRINT = "ConnectionError: refused <n>"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"bulk_limit": 4, "requeue_rate_per_second": 10.0})


async def letters(
    job_factory: Any, n: int, *, owner: str | None = None, **letter: Any
) -> list[uuid.UUID]:
    created = []
    for i in range(n):
        fields: dict[str, Any] = {"status": letter.pop("job_status", "dead")}
        if owner:
            fields["submitted_by"] = owner
        job_id = await job_factory.job(**fields)
        created.append(
            await job_factory.dead_letter(
                job_id,
                fingerprint=letter.get("fingerprint", FINGERPRINT),
                reason=letter.get("reason", "max_attempts"),
                created_at=job_factory.base_time + timedelta(minutes=i),
            )
        )
    return created


async def open_count(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        found = await connection.scalar(
            select(func.count())
            .select_from(dead_letters)
            .where(dead_letters.c.resolved_at.is_(None))
        )
    return int(found or 0)


async def bulk(client: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> httpx.Response:
    return await client.post("/api/dead-letters/bulk", json=body, headers=headers)


async def test_dry_run_counts_and_samples_without_changing_anything(
    client: httpx.AsyncClient,
    auth: Any,
    job_factory: Any,
    store_engine: AsyncEngine,
) -> None:
    mine = await letters(job_factory, 12)
    await letters(job_factory, 2, owner=auth.other_email)
    await letters(job_factory, 1, fingerprint="other")
    response = await bulk(
        client,
        auth.user,
        action="requeue",
        dryRun=True,
        selector={"fingerprint": FINGERPRINT},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["action"], body["dryRun"], body["matching"], body["count"]) == (
        "requeue",
        True,
        12,
        4,  # capped by bulk_limit
    )
    assert [item["id"] for item in body["sample"]] == [str(i) for i in mine[:10]]  # oldest first
    assert set(body["sample"][0]) >= {"id", "jobId", "fingerprint", "payloadSnapshot"}
    admin = (
        await bulk(
            client, auth.admin, action="discard", dryRun=True, selector={"fingerprint": FINGERPRINT}
        )
    ).json()
    assert admin["matching"] == 14
    assert await open_count(store_engine) == 15
    async with store_engine.connect() as connection:
        assert await connection.scalar(select(func.count()).select_from(dead_letter_actions)) == 0
        statuses = set(await connection.scalars(select(jobs.c.status)))
    assert statuses == {"dead"}


async def test_bulk_requeue_is_paced_by_not_before_and_audited(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    mine = await letters(job_factory, 3)
    live_job = await job_factory.job(status="queued")
    await job_factory.dead_letter(live_job, fingerprint=FINGERPRINT)  # its job is not dead
    ids = {str(i) for i in mine}
    response = await bulk(
        client,
        auth.user,
        action="requeue",
        reason="downstream fixed",
        selector={"fingerprint": FINGERPRINT},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "action": "requeue",
        "dryRun": False,
        "count": 3,
        "matching": 3,
        "sample": [],
    }
    async with store_engine.connect() as connection:
        requeued = {
            str(row.id): row
            for row in await connection.execute(
                select(dead_letters.c.id, jobs.c.status, jobs.c.run_at)
                .join(jobs, jobs.c.id == dead_letters.c.job_id)
                .where(dead_letters.c.resolution == "requeued")
            )
        }
        reasons = set(
            await connection.scalars(
                select(job_events.c.reason).where(job_events.c.from_status == "dead")
            )
        )
    assert set(requeued) == ids
    assert reasons == {f"downstream fixed by {auth.user_email}"} | {
        f"downstream fixed by {auth.user_email}; not before {requeued[str(i)].run_at}"
        for i in mine[1:]
    }
    # the oldest letter goes first, at once; the others 100 ms apart (10 per second)
    first, *later = (requeued[str(i)] for i in mine)
    assert (first.status, first.run_at) == ("queued", None)
    assert [row.status for row in later] == ["scheduled"] * 2
    assert later[1].run_at - later[0].run_at == timedelta(milliseconds=100)
    assert await open_count(store_engine) == 1  # the letter of the job that is not dead
    async with store_engine.connect() as connection:
        rows = list(
            await connection.execute(select(dead_letter_actions).order_by(dead_letter_actions.c.id))
        )
    summary, *per_letter = rows
    assert (summary.action, summary.affected, summary.reason) == (
        "bulk_requeue",
        3,
        "downstream fixed",
    )
    assert summary.selector == {"fingerprint": FINGERPRINT}
    assert summary.dead_letter_id is None
    assert {str(r.dead_letter_id) for r in per_letter} == ids
    assert {r.action for r in per_letter} == {"requeue"}


async def test_bulk_discard_touches_only_the_callers_letters_up_to_the_limit(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    mine = await letters(job_factory, 6, reason="poison")
    theirs = await letters(job_factory, 2, owner=auth.other_email, reason="poison")
    response = await bulk(
        client, auth.user, action="discard", reason="known bad", selector={"reason": "poison"}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "action": "discard",
        "dryRun": False,
        "count": 4,
        "matching": 6,
        "sample": [],
    }
    async with store_engine.connect() as connection:
        rows = {row.id: row for row in await connection.execute(select(dead_letters))}
        audit = list(await connection.execute(select(dead_letter_actions)))
    assert [rows[i].resolution for i in mine] == ["discarded"] * 4 + [None, None]  # oldest first
    assert {rows[i].resolved_by for i in mine[:4]} == {auth.user_email}
    assert all(rows[i].resolution is None for i in theirs)
    assert sorted(r.action for r in audit) == ["bulk_discard"] + ["discard"] * 4
    [summary] = [r for r in audit if r.action == "bulk_discard"]
    assert (summary.affected, summary.selector, summary.reason) == (
        4,
        {"reason": "poison"},
        "known bad",
    )
    # by ids: another user's ids select nothing for a user
    none = await bulk(
        client, auth.user, action="discard", selector={"ids": [str(i) for i in theirs]}
    )
    assert (none.json()["count"], none.json()["matching"]) == (0, 0)
    admin = await bulk(
        client, auth.admin, action="discard", selector={"ids": [str(i) for i in theirs]}
    )
    assert admin.json()["count"] == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "requeue", "selector": {}}, "selector"),
        ({"action": "requeue"}, "selector"),
        ({"action": "purge", "selector": {"reason": "x"}}, "action"),
        ({"action": "discard", "selector": {"ids": ["nope"]}}, "selector.ids.0"),
        ({"action": "discard", "selector": {"color": "red"}}, "selector.color"),
        (
            {
                "action": "discard",
                "selector": {"createdFrom": "2024-02-01T00:00:00Z", "createdTo": "2024-01-01"},
            },
            "selector.createdTo",
        ),
    ],
)
async def test_bad_bulk_requests_are_422(
    client: httpx.AsyncClient, auth: Any, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/api/dead-letters/bulk", json=body, headers=auth.user)
    assert response.status_code == 422, response.text
    assert field in [d["field"] for d in response.json()["details"]]


async def test_a_job_with_two_open_letters_is_requeued_once(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    job_id = await job_factory.job(status="dead")
    first = await job_factory.dead_letter(job_id, created_at=job_factory.base_time)
    second = await job_factory.dead_letter(
        job_id, created_at=job_factory.base_time + timedelta(minutes=1)
    )
    response = await bulk(
        client, auth.user, action="requeue", selector={"ids": [str(second), str(first)]}
    )
    assert response.status_code == 200, response.text
    assert response.json()["count"] == 1
    async with store_engine.connect() as connection:
        dispatches = await connection.scalar(
            select(func.count()).select_from(outbox).where(outbox.c.job_id == job_id)
        )
        audit = list(await connection.execute(select(dead_letter_actions)))
    assert dispatches == 1
    assert await open_count(store_engine) == 0  # both letters resolved with the requeue
    assert {(r.action, r.dead_letter_id) for r in audit if r.action == "requeue"} == {
        ("requeue", first)  # the oldest letter stands for the job
    }
