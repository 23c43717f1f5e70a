"""POST /api/dead-letters/bulk: dry run, discard, paced requeue, limits and visibility."""

import itertools
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import RetryRequested, parse_message
from jobs_common.jobstore import dead_letter_actions, dead_letters
from jobs_common.topology import RETRY
from jobs_dashboard.settings import Settings

from .conftest import next_message

pytestmark = pytest.mark.integration

FINGERPRINT = "ConnectionError: refused <n>"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"bulk_limit": 4, "requeue_rate_per_second": 10.0, "bulk_publish_chunk": 2}
    )


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
    command_queue: Any,
    store_engine: AsyncEngine,
) -> None:
    queue = await command_queue(RETRY)
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
    assert (await queue.declare()).message_count == 0
    assert await open_count(store_engine) == 15
    async with store_engine.connect() as connection:
        assert await connection.scalar(select(func.count()).select_from(dead_letter_actions)) == 0


async def test_bulk_requeue_is_paced_by_not_before_and_audited(
    client: httpx.AsyncClient,
    auth: Any,
    job_factory: Any,
    command_queue: Any,
    store_engine: AsyncEngine,
) -> None:
    queue = await command_queue(RETRY)
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
    commands = [parse_message(RetryRequested, (await next_message(queue)).body) for _ in mine]
    assert (await queue.declare()).message_count == 0
    async with store_engine.connect() as connection:
        by_job = {
            row.job_id: str(row.id)
            for row in await connection.execute(select(dead_letters.c.id, dead_letters.c.job_id))
        }
    assert {by_job[c.job_id] for c in commands} == ids
    assert all(c.reason == "downstream fixed" and c.payload is None for c in commands)
    assert all(c.requested_by == auth.user_email for c in commands)
    due = {by_job[c.job_id]: c.not_before for c in commands}
    not_before = [due[str(i)] for i in mine]  # the oldest letter goes first
    assert all(t is not None for t in not_before)
    gaps = [later - earlier for earlier, later in itertools.pairwise(not_before)]
    assert gaps == [timedelta(milliseconds=100)] * 2  # 10 per second
    # letters stay open: the scheduler resolves them when it applies the requeue
    assert await open_count(store_engine) == 4
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
