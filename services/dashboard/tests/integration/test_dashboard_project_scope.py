"""Reads and commands scoped by project (issue 32, docs/tenancy.md "Who sees what"): a caller
the gateway scoped reads the jobs, batches, schedules and dead letters of the projects of its
grants, whoever submitted them; another project's ids answer 404; a viewer reads but is
refused (403) every command; a member retries, cancels, requeues and discards; schedules take
an admin. The scheduler's internal API checks the scope again."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from jobs_common.auth import Identity
from jobs_common.jobstore import batches, schedules
from jobs_common.tenancy import OrgRole

from .conftest import INTERNAL_TOKEN

pytestmark = pytest.mark.integration

SHARED = uuid.uuid4()  # "web-app": alice member, bob viewer, olga admin
ELSEWHERE = uuid.uuid4()  # another organization's project: carol only


def scoped(
    email: str, *grants: tuple[uuid.UUID, OrgRole], key: str | None = None
) -> dict[str, str]:
    """Headers as the gateway forwards them for a caller with these grants."""
    identity = Identity(
        user_id=f"u-{email}",
        email=email,
        role="user",
        project_id=str(grants[0][0]),
        project_role=grants[0][1],
        grants=tuple((str(project), role) for project, role in grants),
        api_key=key,
    )
    return identity.headers(INTERNAL_TOKEN)


ALICE = scoped("alice@acme.test", (SHARED, OrgRole.MEMBER))
BOB = scoped("bob@acme.test", (SHARED, OrgRole.VIEWER))
OLGA = scoped("olga@acme.test", (SHARED, OrgRole.ADMIN))
CAROL = scoped("carol@other.test", (ELSEWHERE, OrgRole.OWNER))
VIEWER_KEY = scoped("olga@acme.test", (SHARED, OrgRole.VIEWER), key="jk_view1234")


@pytest.fixture
async def world(job_factory: Any) -> dict[str, uuid.UUID]:
    """Jobs of both projects; the shared project's submitted by two people."""
    ids = {
        "by_alice": await job_factory.job(submitted_by="alice@acme.test", project_id=SHARED),
        "by_olga": await job_factory.job(
            submitted_by="olga@acme.test", project_id=SHARED, status="dead"
        ),
        "running": await job_factory.job(
            submitted_by="olga@acme.test", project_id=SHARED, status="running"
        ),
        "carols": await job_factory.job(
            submitted_by="carol@other.test", project_id=ELSEWHERE, status="dead"
        ),
    }
    ids["letter"] = await job_factory.dead_letter(ids["by_olga"])
    ids["carols_letter"] = await job_factory.dead_letter(ids["carols"])
    return ids


EVERY_OPEN_LETTER = {
    "action": "discard",
    "selector": {"reason": "attempts exhausted"},
    "dryRun": True,
}


async def listed(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> set[str]:
    """The ids a listing shows (a job's ``jobId``, anything else's ``id``)."""
    answer = await client.get(path, headers=headers)
    assert answer.status_code == 200, answer.text
    key = {"/api/jobs": "jobId", "/api/batches": "batchId"}.get(path.split("?")[0], "id")
    return {item[key] for item in answer.json()["items"]}


async def test_a_project_member_reads_every_job_of_it_and_none_of_another(
    client: httpx.AsyncClient, world: dict[str, uuid.UUID]
) -> None:
    shared = {str(world[k]) for k in ("by_alice", "by_olga", "running")}
    assert await listed(client, "/api/jobs", ALICE) == shared
    assert await listed(client, "/api/jobs", BOB) == shared
    assert await listed(client, "/api/jobs", CAROL) == {str(world["carols"])}
    # Within its projects a caller may narrow to one submitter.
    narrowed = await listed(client, "/api/jobs?submittedBy=alice@acme.test", BOB)
    assert narrowed == {str(world["by_alice"])}
    for path in (f"/api/jobs/{world['carols']}", f"/api/jobs/{world['carols']}/logs"):
        assert (await client.get(path, headers=ALICE)).status_code == 404
    # A projectId filter narrows within the caller's projects, its total too (the rollups).
    page = (await client.get(f"/api/jobs?projectId={SHARED}", headers=ALICE)).json()
    assert ({item["jobId"] for item in page["items"]}, page["totalItems"]) == (shared, 3)
    elsewhere = (await client.get(f"/api/jobs?projectId={ELSEWHERE}", headers=ALICE)).json()
    assert (elsewhere["items"], elsewhere["totalItems"]) == ([], 0)
    detail = await client.get(f"/api/jobs/{world['by_olga']}", headers=BOB)
    assert detail.status_code == 200
    assert detail.json()["projectId"] == str(SHARED)


async def test_dead_letters_follow_their_jobs_project(
    client: httpx.AsyncClient, world: dict[str, uuid.UUID]
) -> None:
    assert await listed(client, "/api/dead-letters", BOB) == {str(world["letter"])}
    assert await listed(client, "/api/dead-letters", CAROL) == {str(world["carols_letter"])}
    other = await client.get(f"/api/dead-letters/{world['carols_letter']}", headers=ALICE)
    assert other.status_code == 404
    groups = (await client.get("/api/dead-letters/groups", headers=ALICE)).json()
    assert sum(group["count"] for group in groups["items"]) == 1


async def test_a_viewer_reads_but_every_command_is_refused(
    client: httpx.AsyncClient, world: dict[str, uuid.UUID]
) -> None:
    for headers in (BOB, VIEWER_KEY):
        commands = [
            await client.post(f"/api/jobs/{world['by_olga']}/retry", headers=headers),
            await client.post(f"/api/jobs/{world['running']}/cancel", headers=headers),
            await client.post(f"/api/dead-letters/{world['letter']}/requeue", headers=headers),
            await client.post(f"/api/dead-letters/{world['letter']}/discard", headers=headers),
        ]
        assert [answer.status_code for answer in commands] == [403] * 4, [
            answer.text for answer in commands
        ]
        assert "viewer" in commands[0].json()["message"]
        bulk = await client.post(
            "/api/dead-letters/bulk",
            json=EVERY_OPEN_LETTER,
            headers=headers,
        )
        assert bulk.json()["matching"] == 0  # no letter it may act on
    letter = await client.get(f"/api/dead-letters/{world['letter']}", headers=BOB)
    assert letter.json()["resolvedAt"] is None  # nothing changed


async def test_another_projects_commands_answer_404_not_403(
    client: httpx.AsyncClient, world: dict[str, uuid.UUID]
) -> None:
    answers = [
        await client.post(f"/api/jobs/{world['carols']}/retry", headers=ALICE),
        await client.post(f"/api/dead-letters/{world['carols_letter']}/requeue", headers=ALICE),
        await client.post(f"/api/dead-letters/{world['carols_letter']}/discard", headers=ALICE),
    ]
    assert [answer.status_code for answer in answers] == [404] * 3


async def test_a_member_acts_on_a_colleagues_jobs_and_the_actor_is_recorded(
    client: httpx.AsyncClient, world: dict[str, uuid.UUID]
) -> None:
    bulk = await client.post(
        "/api/dead-letters/bulk",
        json=EVERY_OPEN_LETTER,
        headers=ALICE,
    )
    assert bulk.json()["matching"] == 1  # the shared project's letter, not carol's
    discarded = await client.post(
        f"/api/dead-letters/{world['letter']}/discard", json={"reason": "dup"}, headers=ALICE
    )
    assert discarded.status_code == 200, discarded.text
    assert discarded.json()["resolvedBy"] == "alice@acme.test"
    # The audit row is the project's: its viewer reads it, another organization does not.
    for headers, count in ((BOB, 1), (ALICE, 1), (CAROL, 0)):
        log = (await client.get("/api/dead-letters/actions", headers=headers)).json()
        assert [row["actor"] for row in log["items"]] == ["alice@acme.test"] * count
    retried = await client.post(f"/api/jobs/{world['by_olga']}/retry", headers=ALICE)
    assert retried.status_code == 202, retried.text


@pytest.mark.registry  # the edited payload is checked
async def test_schedules_are_the_projects_and_take_an_admin(
    client: httpx.AsyncClient, job_factory: Any
) -> None:
    schedule_id = uuid.uuid4()
    await job_factory.insert(
        schedules,
        id=schedule_id,
        name="nightly",
        cron="0 7 * * *",
        timezone="UTC",
        job_template={"type": "simulate", "priority": 1, "payload": {}},
        owner="olga@acme.test",
        project_id=SHARED,
    )
    assert await listed(client, "/api/schedules", BOB) == {str(schedule_id)}
    assert await listed(client, "/api/schedules", CAROL) == set()
    assert (await client.get(f"/api/schedules/{schedule_id}", headers=CAROL)).status_code == 404
    pause = f"/api/schedules/{schedule_id}/pause"
    assert (await client.post(pause, headers=CAROL)).status_code == 404
    refused = await client.post(pause, headers=ALICE)
    assert refused.status_code == 403
    assert "member" in refused.json()["message"]
    paused = await client.post(pause, headers=OLGA)
    assert paused.status_code == 200, paused.text
    assert paused.json()["paused"] is True
    assert paused.json()["projectId"] == str(SHARED)
    template = {"type": "simulate", "priority": 2, "payload": {}}
    body = {"name": "hourly", "cron": "0 * * * *", "timezone": "UTC", "jobTemplate": template}
    assert (await client.post("/api/schedules", json=body, headers=ALICE)).status_code == 403
    created = await client.post("/api/schedules", json=body, headers=OLGA)
    assert created.status_code == 201, created.text
    assert created.json()["projectId"] == str(SHARED)


async def test_batches_are_listed_within_the_callers_projects(
    client: httpx.AsyncClient, job_factory: Any
) -> None:
    shared_batch, other_batch = uuid.uuid4(), uuid.uuid4()
    for batch_id, owner, project in (
        (shared_batch, "olga@acme.test", SHARED),
        (other_batch, "carol@other.test", ELSEWHERE),
    ):
        await job_factory.insert(
            batches, id=batch_id, submitted_by=owner, total=1, project_id=project
        )
    assert await listed(client, "/api/batches", BOB) == {str(shared_batch)}
    assert (await client.get(f"/api/batches/{other_batch}", headers=BOB)).status_code == 404
    assert (await client.get(f"/api/batches/{shared_batch}", headers=ALICE)).status_code == 200


async def test_the_scheduler_refuses_a_command_outside_the_callers_scope(
    settings: Any, world: dict[str, uuid.UUID]
) -> None:
    """A dashboard bug must not become a write in another project: the scheduler's internal
    API, called directly as a member of the shared project, does not find carol's letter."""
    async with httpx.AsyncClient(base_url=settings.scheduler_urls[0]) as scheduler:
        answer = await scheduler.post(
            f"/internal/v1/dead-letters/{world['carols_letter']}/discard",
            json={},
            headers=ALICE,
        )
        assert answer.status_code == 404, answer.text
        viewer = await scheduler.post(
            f"/internal/v1/dead-letters/{world['letter']}/discard", json={}, headers=BOB
        )
        assert viewer.status_code == 404  # a viewer may act on none
