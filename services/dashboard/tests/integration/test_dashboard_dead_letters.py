"""Dead letters: listing, groups, requeue (with an edited payload), discard, audit log. The
commands reach the scheduler's internal API (the real routes, on this test's database)."""

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import JobDispatch, parse_message
from jobs_common.jobstore import dead_letter_actions, dead_letters, jobs, outbox
from jobs_common.tenancy import personal_project_id
from jobs_dashboard.service import create_app
from jobs_dashboard.settings import Settings
from jobs_testing.infra import free_port

pytestmark = pytest.mark.integration

EMAIL = {"to": "a@example.com", "subject": "hi", "body": "there"}


async def dead_job(job_factory: Any, **letter: Any) -> tuple[uuid.UUID, uuid.UUID]:
    owner = letter.pop("owner", None)
    job_type = letter.pop("job_type", "email")
    job_fields: dict[str, Any] = {"status": "dead", "type": job_type, "payload": EMAIL}
    if owner:
        job_fields["submitted_by"] = owner
    job_id = await job_factory.job(**job_fields)
    dead_id = await job_factory.dead_letter(job_id, payload_snapshot=EMAIL, **letter)
    return job_id, dead_id


async def audit_rows(engine: AsyncEngine) -> list[Any]:
    async with engine.connect() as connection:
        return list(
            await connection.execute(select(dead_letter_actions).order_by(dead_letter_actions.c.id))
        )


async def test_list_shape_visibility_and_filters(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    job_a, dl_a = await dead_job(
        job_factory, reason="max_attempts", fingerprint="ValueError: bad <n>", created_at=base
    )
    _, dl_b = await dead_job(
        job_factory,
        reason="poison",
        fingerprint="lost",
        job_type="simulate",
        created_at=base + timedelta(hours=1),
    )
    _, dl_resolved = await dead_job(
        job_factory, reason="max_attempts", resolved_at=base, resolved_by="x", resolution="requeued"
    )
    _, dl_other = await dead_job(job_factory, owner=auth.other_email, reason="timeout")

    async def ids(headers: dict[str, str], **params: Any) -> list[str]:
        response = await client.get("/api/dead-letters", params=params, headers=headers)
        assert response.status_code == 200, response.text
        return [item["id"] for item in response.json()["items"]]

    assert await ids(auth.user) == [str(dl_b), str(dl_a)]  # open only, newest first
    assert set(await ids(auth.user, status="all")) == {str(dl_a), str(dl_b), str(dl_resolved)}
    assert await ids(auth.user, status="resolved") == [str(dl_resolved)]
    assert set(await ids(auth.admin)) == {str(dl_a), str(dl_b), str(dl_other)}
    assert await ids(auth.user, reason="poison") == [str(dl_b)]
    assert await ids(auth.user, jobType="email") == [str(dl_a)]
    assert await ids(auth.user, fingerprint="ValueError: bad <n>") == [str(dl_a)]
    hour = (base + timedelta(hours=1)).isoformat()
    assert await ids(auth.user, createdFrom=hour) == [str(dl_b)]
    assert await ids(auth.user, createdTo=hour) == [str(dl_a)]

    body = (await client.get("/api/dead-letters", params={"pageSize": 1}, headers=auth.user)).json()
    assert (body["pageNumber"], body["pageSize"], body["totalItems"], body["totalPages"]) == (
        1,
        1,
        2,
        2,
    )
    item = body["items"][0]
    assert item["id"] == str(dl_b)
    page2 = (
        await client.get(
            "/api/dead-letters", params={"pageSize": 1, "pageNumber": 2}, headers=auth.user
        )
    ).json()
    first = page2["items"][0]
    assert first == {
        "id": str(dl_a),
        "jobId": str(job_a),
        "projectId": str(personal_project_id(auth.user_email)),
        "jobType": "email",
        "jobStatus": "dead",
        "attempt": 3,
        "reason": "max_attempts",
        "lastError": "boom",
        "lastErrorClass": "RuntimeError",
        "fingerprint": "ValueError: bad <n>",
        "payloadSnapshot": EMAIL,
        "createdAt": first["createdAt"],
        "resolvedAt": None,
        "resolvedBy": None,
        "resolution": None,
    }
    bad = await client.get("/api/dead-letters", params={"status": "closed"}, headers=auth.user)
    assert bad.status_code == 422
    assert bad.json()["details"][0]["field"] == "status"


async def test_groups_by_fingerprint(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    base = job_factory.base_time
    for minutes, reason, error in [(1, "max_attempts", "bad 1"), (5, "timeout", "bad 2")]:
        await dead_job(
            job_factory,
            reason=reason,
            fingerprint="ValueError: bad <n>",
            last_error=error,
            created_at=base + timedelta(minutes=minutes),
        )
    await dead_job(job_factory, reason="poison", fingerprint="lost", created_at=base)
    await dead_job(job_factory, owner=auth.other_email, fingerprint="lost")
    await dead_job(job_factory, owner=auth.other_email, fingerprint="lost")

    mine = (await client.get("/api/dead-letters/groups", headers=auth.user)).json()["items"]
    assert mine[0] == {
        "fingerprint": "ValueError: bad <n>",
        "count": 2,
        "reasons": ["max_attempts", "timeout"],
        "sampleError": "bad 2",
        "firstAt": mine[0]["firstAt"],
        "lastAt": mine[0]["lastAt"],
    }
    assert mine[0]["firstAt"] < mine[0]["lastAt"]
    assert [(g["fingerprint"], g["count"]) for g in mine] == [
        ("ValueError: bad <n>", 2),
        ("lost", 1),
    ]
    everyone = (await client.get("/api/dead-letters/groups", headers=auth.admin)).json()["items"]
    assert [(g["fingerprint"], g["count"]) for g in everyone] == [
        ("lost", 3),
        ("ValueError: bad <n>", 2),
    ]
    only = await client.get(
        "/api/dead-letters/groups", params={"reason": "timeout"}, headers=auth.user
    )
    assert [(g["fingerprint"], g["count"]) for g in only.json()["items"]] == [
        ("ValueError: bad <n>", 1)
    ]


async def job_row(engine: AsyncEngine, job_id: uuid.UUID) -> Any:
    async with engine.connect() as connection:
        return (await connection.execute(select(jobs).where(jobs.c.id == job_id))).one()


async def letter_row(engine: AsyncEngine, dead_id: uuid.UUID) -> Any:
    async with engine.connect() as connection:
        return (
            await connection.execute(select(dead_letters).where(dead_letters.c.id == dead_id))
        ).one()


async def dispatches(engine: AsyncEngine, job_id: uuid.UUID) -> list[JobDispatch]:
    """The dispatches the scheduler wrote to its outbox for the job (no relay runs here)."""
    async with engine.connect() as connection:
        bodies = await connection.scalars(select(outbox.c.body).where(outbox.c.job_id == job_id))
        return [parse_message(JobDispatch, body) for body in bodies]


@pytest.mark.registry  # the edited payload is checked
async def test_requeue_runs_the_job_again_with_the_edited_payload_and_audits(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    png = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAA"
    job_id = await job_factory.job(status="dead", type="image_resize", trace_id="trace-r")
    dead_id = await job_factory.dead_letter(job_id)
    response = await client.post(
        f"/api/dead-letters/{dead_id}/requeue",
        json={"reason": "fixed size", "payload": {"imageBase64": png, "width": 5, "height": 6}},
        headers=auth.user,
    )
    assert response.status_code == 202, response.text
    assert response.json() == {
        "deadLetterId": str(dead_id),
        "jobId": str(job_id),
        "status": "requeue_requested",
    }
    edited = {"imageBase64": png, "width": 5, "height": 6, "format": None}
    job = await job_row(store_engine, job_id)
    assert (job.status, job.attempt, job.payload) == ("queued", 2, edited)
    [dispatch] = await dispatches(store_engine, job_id)
    assert (dispatch.attempt, dispatch.payload, dispatch.trace_id) == (2, edited, "trace-r")
    letter = await letter_row(store_engine, dead_id)
    assert (letter.resolution, letter.resolved_by) == ("requeued", auth.user_email)
    [row] = await audit_rows(store_engine)
    assert (row.action, row.actor, row.reason, row.dead_letter_id, row.job_id, row.affected) == (
        "requeue",
        auth.user_email,
        "fixed size",
        dead_id,
        job_id,
        1,
    )
    # requeued once: the letter is resolved
    again = await client.post(f"/api/dead-letters/{dead_id}/requeue", headers=auth.admin)
    assert again.status_code == 409
    assert "requeued" in again.json()["message"]

    # without a body: the job's own payload
    plain_job, plain_letter = await dead_job(job_factory)
    plain = await client.post(f"/api/dead-letters/{plain_letter}/requeue", headers=auth.admin)
    assert plain.status_code == 202
    assert (await job_row(store_engine, plain_job)).payload == EMAIL
    assert (await letter_row(store_engine, plain_letter)).resolved_by == auth.admin_email


async def test_two_requeues_of_one_letter_at_once_run_the_job_once(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    job_id, dead_id = await dead_job(job_factory)
    answers = await asyncio.gather(
        *(client.post(f"/api/dead-letters/{dead_id}/requeue", headers=auth.user) for _ in range(2))
    )
    assert sorted(a.status_code for a in answers) == [202, 409]
    assert len(await dispatches(store_engine, job_id)) == 1
    assert [r.action for r in await audit_rows(store_engine)] == ["requeue"]


@pytest.mark.registry  # the edited payload is checked
async def test_requeue_with_an_invalid_payload_is_422_and_changes_nothing(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    job_id, dead_id = await dead_job(job_factory)
    response = await client.post(
        f"/api/dead-letters/{dead_id}/requeue",
        json={"payload": {"to": "nope", "subject": "s"}},
        headers=auth.user,
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "validation_error"
    assert {d["field"] for d in body["details"]} == {"payload.to", "payload.body"}
    assert (await job_row(store_engine, job_id)).status == "dead"
    assert (await letter_row(store_engine, dead_id)).resolved_at is None
    assert await audit_rows(store_engine) == []


async def test_requeue_conflicts_and_visibility(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    base = job_factory.base_time
    _, resolved = await dead_job(
        job_factory, resolved_at=base, resolved_by="a", resolution="discarded"
    )
    queued_job = await job_factory.job(status="queued")
    open_of_live_job = await job_factory.dead_letter(queued_job)
    others_job, others = await dead_job(job_factory, owner=auth.other_email)

    conflict = await client.post(f"/api/dead-letters/{resolved}/requeue", headers=auth.user)
    assert conflict.status_code == 409
    assert "discarded" in conflict.json()["message"]
    not_dead = await client.post(f"/api/dead-letters/{open_of_live_job}/requeue", headers=auth.user)
    assert not_dead.status_code == 409
    assert "queued" in not_dead.json()["message"]
    hidden = await client.post(f"/api/dead-letters/{others}/requeue", headers=auth.user)
    assert hidden.status_code == 404
    unknown = await client.post(f"/api/dead-letters/{uuid.uuid4()}/requeue", headers=auth.user)
    assert unknown.status_code == 404
    assert (await job_row(store_engine, others_job)).status == "dead"
    assert await audit_rows(store_engine) == []


async def test_commands_when_no_scheduler_answers_are_503_and_change_nothing(
    settings: Settings, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    job_id, dead_id = await dead_job(job_factory)
    gone = settings.model_copy(update={"scheduler_urls": [f"http://127.0.0.1:{free_port()}"]})
    app = create_app(gone)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://dashboard"
        ) as client,
    ):
        answers = [
            await client.post(f"/api/dead-letters/{dead_id}/requeue", headers=auth.user),
            await client.post(f"/api/dead-letters/{dead_id}/discard", headers=auth.user),
            await client.post(
                "/api/dead-letters/bulk",
                json={"action": "requeue", "selector": {"ids": [str(dead_id)]}},
                headers=auth.user,
            ),
        ]
    assert [a.status_code for a in answers] == [503] * 3
    assert {a.json()["error"] for a in answers} == {"service_unavailable"}
    assert (await job_row(store_engine, job_id)).status == "dead"
    assert (await letter_row(store_engine, dead_id)).resolved_at is None
    assert await audit_rows(store_engine) == []


async def test_discard_resolves_once_and_audits(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, store_engine: AsyncEngine
) -> None:
    job_id, dead_id = await dead_job(job_factory)
    response = await client.post(
        f"/api/dead-letters/{dead_id}/discard", json={"reason": "obsolete"}, headers=auth.user
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["id"], body["resolution"], body["resolvedBy"]) == (
        str(dead_id),
        "discarded",
        auth.user_email,
    )
    assert body["resolvedAt"] is not None
    assert body["jobStatus"] == "dead"
    async with store_engine.connect() as connection:
        row = (
            await connection.execute(select(dead_letters).where(dead_letters.c.id == dead_id))
        ).one()
    assert (row.resolution, row.resolved_by) == ("discarded", auth.user_email)
    again = await client.post(f"/api/dead-letters/{dead_id}/discard", headers=auth.user)
    assert again.status_code == 409
    [audit] = await audit_rows(store_engine)
    assert (audit.action, audit.actor, audit.reason, audit.job_id) == (
        "discard",
        auth.user_email,
        "obsolete",
        job_id,
    )
    _, others = await dead_job(job_factory, owner=auth.other_email)
    assert (
        await client.post(f"/api/dead-letters/{others}/discard", headers=auth.user)
    ).status_code == 404
    assert (
        await client.post(f"/api/dead-letters/{others}/discard", headers=auth.admin)
    ).status_code == 200
    listed = (await client.get("/api/dead-letters", headers=auth.admin)).json()
    assert listed["items"] == []


async def test_action_log_users_see_their_own(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    _, mine = await dead_job(job_factory)
    _, theirs = await dead_job(job_factory, owner=auth.other_email)
    await client.post(f"/api/dead-letters/{mine}/discard", json={"reason": "a"}, headers=auth.user)
    await client.post(
        f"/api/dead-letters/{theirs}/discard", json={"reason": "b"}, headers=auth.other
    )
    own = (await client.get("/api/dead-letters/actions", headers=auth.user)).json()
    assert own["totalItems"] == 1
    entry = own["items"][0]
    assert entry == {
        "id": entry["id"],
        "action": "discard",
        "actor": auth.user_email,
        "reason": "a",
        "deadLetterId": str(mine),
        "jobId": entry["jobId"],
        "selector": None,
        "affected": 1,
        "at": entry["at"],
    }
    everyone = (await client.get("/api/dead-letters/actions", headers=auth.admin)).json()
    assert [i["reason"] for i in everyone["items"]] == ["b", "a"]  # newest first
    narrowed = await client.get(
        "/api/dead-letters/actions", params={"deadLetterId": str(theirs)}, headers=auth.admin
    )
    assert [i["reason"] for i in narrowed.json()["items"]] == ["b"]


async def test_one_dead_letter_by_id_for_its_owner_and_admins(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id, dead_id = await dead_job(job_factory, reason="max_attempts")
    mine = await client.get(f"/api/dead-letters/{dead_id}", headers=auth.user)
    assert mine.status_code == 200, mine.text
    letter = mine.json()
    assert (letter["id"], letter["jobId"], letter["reason"]) == (
        str(dead_id),
        str(job_id),
        "max_attempts",
    )
    assert letter["payloadSnapshot"] == EMAIL and letter["resolvedAt"] is None
    assert (await client.get(f"/api/dead-letters/{dead_id}", headers=auth.admin)).status_code == 200
    hidden = await client.get(f"/api/dead-letters/{dead_id}", headers=auth.other)
    assert hidden.status_code == 404 and hidden.json()["error"] == "not_found"
    unknown = await client.get(f"/api/dead-letters/{uuid.uuid4()}", headers=auth.user)
    assert unknown.status_code == 404
    assert (await client.get("/api/dead-letters/groups", headers=auth.user)).status_code == 200
    assert (await client.get("/api/dead-letters/not-a-uuid", headers=auth.user)).status_code == 422
