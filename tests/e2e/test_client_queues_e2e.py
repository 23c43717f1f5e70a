"""A project's queues (docs/client.md, "Queues") through the Python client and the ``jobs`` CLI
against the real stack: a queue created with limits, read back, changed by name and by id,
paused and resumed, listed and deleted; a name already in use is the client's ``Conflict``,
an invalid name its ``ValidationError``; a viewer of the project reads its queues and may
change none (``Forbidden``), a stranger sees none (``NotFound``); and ``jobs queues`` run as a
subprocess, its ``--json`` answers, table and exit codes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from jobs_client import (
    AsyncJobsClient,
    ConcurrencyKey,
    Conflict,
    Forbidden,
    JobsClient,
    NotFound,
    RateLimit,
    ValidationError,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

PASSWORD = "a-long-password"
JOBS_CLI = Path(sys.executable).parent / "jobs"
T = TypeVar("T")


def new_user(gateway_url: str, who: str) -> str:
    """A user of this test's own, admin of their personal default project, where queues go
    when the client names no project: what is there is exactly what the test made."""
    email = f"{who}-{uuid.uuid4().hex[:10]}@example.com"
    with httpx.Client(base_url=gateway_url, timeout=10) as http:
        registered = http.post("/auth/register", json={"email": email, "password": PASSWORD})
    assert registered.status_code == 202, registered.text
    return email


def queue_name() -> str:
    return f"q-{uuid.uuid4().hex[:10]}"  # ^[a-z][a-z0-9_-]{0,62}$


async def settled(call: Callable[[], Awaitable[T]], timeout: float = 10.0) -> T:
    """``call()`` once the caller's new membership has reached the gateway (its grants are
    cached for a moment, docs/tenancy.md): until then the project is a 404."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await call()
        except NotFound:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


def test_a_queue_is_created_read_set_paused_resumed_listed_and_deleted(gateway_url: str) -> None:
    email = new_user(gateway_url, "queues")
    name, other = queue_name(), queue_name()
    key = ConcurrencyKey("customerId", 2)
    with JobsClient(gateway_url, email=email, password=PASSWORD) as jobs:
        assert jobs.queues.by_name(name) is None
        created = jobs.queues.create(
            name,
            max_concurrency=5,
            rate="20/s",
            concurrency_key=key,
            default_priority=3,
            default_timeout_seconds=60,
        )
        assert created.name == name and created.created_by == email
        assert (created.max_concurrency, created.rate_limit, created.concurrency_key) == (
            5,
            RateLimit(20, "second"),
            key,
        )
        assert (created.default_priority, created.default_timeout_seconds) == (3, 60)
        assert created.default_retry_policy is None
        assert (created.paused, created.paused_at, created.paused_by) == (False, None, None)
        assert (created.waiting, created.running) == (0, 0)
        assert created.created_at.tzinfo is not None and created.project_id

        read = jobs.queues.get(created.id)
        assert (read.id, read.name, read.project_id) == (created.id, name, created.project_id)
        assert (read.max_concurrency, read.rate_limit, read.concurrency_key) == (
            5,
            RateLimit(20, "second"),
            key,
        )
        found = jobs.queues.by_name(name)
        assert found is not None and found.id == created.id

        # By name: only what is given changes, and None removes a limit.
        changed = jobs.queues.set(name, max_concurrency=None, rate="600/min")
        assert changed.id == created.id
        assert (changed.max_concurrency, changed.rate_limit) == (None, RateLimit(600, "minute"))
        assert (changed.concurrency_key, changed.default_priority) == (key, 3)
        assert changed.updated_at >= created.updated_at

        # By id, the same way.
        cleared = jobs.queues.update(created.id, concurrency_key=None, default_priority=None)
        assert (cleared.concurrency_key, cleared.default_priority) == (None, None)
        assert (cleared.rate_limit, cleared.default_timeout_seconds) == (
            RateLimit(600, "minute"),
            60,
        )

        # A name the project does not have yet: set creates it.
        made = jobs.queues.set(other, max_concurrency=1)
        assert made.name == other and made.id != created.id and made.max_concurrency == 1

        paused = jobs.queues.pause(name)  # by name
        assert paused.id == created.id and paused.paused
        assert paused.paused_at is not None and paused.paused_by == email
        assert jobs.queues.get(created.id).paused
        assert not jobs.queues.resume(created.id).paused  # by id
        assert not jobs.queues.get(created.id).paused

        listed = {q.name: q for q in jobs.queues.list()}
        assert {name, other} <= set(listed)
        assert listed[name].id == created.id and not listed[name].paused
        assert listed[other].max_concurrency == 1
        assert [q.id for q in jobs.queues.list(name=other)] == [made.id]
        paged = [q.id for q in jobs.queues.list(page_size=1)]  # one page per queue
        assert {created.id, made.id} <= set(paged) and len(paged) == len(set(paged))

        with pytest.raises(Conflict) as taken:
            jobs.queues.create(name)
        assert (taken.value.status, taken.value.code) == (409, "conflict")
        assert taken.value.request_id
        with pytest.raises(ValidationError) as invalid:
            jobs.queues.create("Not a name")
        assert "name" in invalid.value.fields

        jobs.queues.delete(created.id)
        jobs.queues.delete(made.id)
        with pytest.raises(NotFound):
            jobs.queues.get(created.id)
        assert jobs.queues.by_name(name) is None
        with pytest.raises(NotFound):
            jobs.queues.pause(name)
        assert {name, other}.isdisjoint(q.name for q in jobs.queues.list())


async def test_a_viewer_reads_the_projects_queues_and_changes_none(gateway_url: str) -> None:
    owner, viewer, stranger = await asyncio.gather(
        *(asyncio.to_thread(new_user, gateway_url, who) for who in ("owner", "viewer", "other"))
    )
    async with AsyncJobsClient(gateway_url, email=owner, password=PASSWORD) as signed_in:
        token = (await signed_in.login()).access_token
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=gateway_url, timeout=10, headers=auth) as http:
        org = (await http.post("/api/organizations", json={"name": "Queue Co"})).json()
        project = await http.post("/api/projects", json={"orgId": org["id"], "name": "web"})
        assert project.status_code == 201, project.text
        web = str(project.json()["id"])
        member = {"email": viewer, "role": "viewer"}
        added = await http.post(f"/api/organizations/{org['id']}/members", json=member)
        assert added.status_code == 201, added.text

    name = queue_name()
    async with AsyncJobsClient(gateway_url, email=owner, password=PASSWORD, project=web) as admin:
        queue = await settled(
            lambda: admin.queues.create(name, max_concurrency=2, rate=RateLimit(5, "minute"))
        )
        assert queue.project_id == web

    async with AsyncJobsClient(
        gateway_url, email=viewer, password=PASSWORD, project=web
    ) as watcher:
        seen = await settled(lambda: watcher.queues.by_name(name))
        assert seen is not None and seen.id == queue.id
        assert seen.rate_limit == RateLimit(5, "minute")
        assert (await watcher.queues.get(queue.id)).max_concurrency == 2
        assert queue.id in {q.id async for q in watcher.queues.list()}
        refused: list[Callable[[], Awaitable[Any]]] = [
            lambda: watcher.queues.create(queue_name()),
            lambda: watcher.queues.update(queue.id, max_concurrency=3),
            lambda: watcher.queues.set(name, rate=None),
            lambda: watcher.queues.pause(queue.id),
            lambda: watcher.queues.resume(name),
            lambda: watcher.queues.delete(queue.id),
        ]
        for call in refused:
            with pytest.raises(Forbidden) as forbidden:
                await call()
            assert forbidden.value.status == 403

    async with AsyncJobsClient(gateway_url, email=stranger, password=PASSWORD) as outsider:
        with pytest.raises(NotFound):
            await outsider.queues.get(queue.id)
        assert await outsider.queues.by_name(name) is None  # their own project has none

    async with AsyncJobsClient(gateway_url, email=owner, password=PASSWORD, project=web) as admin:
        after = await admin.queues.get(queue.id)  # the refused calls changed nothing
        assert (after.max_concurrency, after.rate_limit, after.paused) == (
            2,
            RateLimit(5, "minute"),
            False,
        )
        await admin.queues.delete(queue.id)
        assert await admin.queues.by_name(name) is None


async def test_jobs_queues_commands(gateway_url: str, tmp_path: Path) -> None:
    email = await asyncio.to_thread(new_user, gateway_url, "cli")
    async with AsyncJobsClient(gateway_url, email=email, password=PASSWORD) as jobs:
        token = (await jobs.login()).access_token
    unset = ("JOBS_TOKEN", "JOBS_URL", "JOBS_API_KEY", "JOBS_PROJECT")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env |= {"JOBS_URL": gateway_url, "JOBS_TOKEN": token, "XDG_CONFIG_HOME": str(tmp_path)}

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(JOBS_CLI), "queues", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    async def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(cli, *argv)

    def answer(done: subprocess.CompletedProcess[str], code: int = 0) -> Any:
        assert done.returncode == code, (done.args, done.returncode, done.stdout, done.stderr)
        return json.loads(done.stdout)

    name = queue_name()
    made = answer(
        await run(
            *("set", name, "--max-concurrency", "3", "--rate", "20/s"),
            *("--concurrency-key", "customerId:2", "--default-priority", "1"),
            *("--default-timeout", "30", "--json"),
        )
    )
    assert made["name"] == name and made["maxConcurrency"] == 3
    assert made["rateLimit"] == {"limit": 20, "per": "second"}
    assert made["concurrencyKey"] == {"field": "customerId", "limit": 2}
    assert (made["defaultPriority"], made["defaultTimeoutSeconds"]) == (1, 30)

    changed = answer(await run("set", name, "--no-rate", "--max-concurrency", "4", "--json"))
    assert changed["id"] == made["id"]
    assert (changed["rateLimit"], changed["maxConcurrency"]) == (None, 4)
    assert changed["concurrencyKey"] == made["concurrencyKey"]  # not given: unchanged

    paused = answer(await run("pause", name, "--json"))
    assert paused["paused"] is True and paused["pausedBy"] == email

    listed, table, shown, bad_rate = await asyncio.gather(
        run("list", "--json"),
        run("list"),
        run("show", name),
        run("set", name, "--rate", "20/hour"),
    )
    assert {q["name"]: q["paused"] for q in answer(listed)}[name] is True
    assert table.returncode == 0, table.stderr
    assert table.stdout.split("\n")[0].split() == [
        "NAME",
        "PAUSED",
        "RUNNING/LIMIT",
        "RATE",
        "WAITING",
    ]
    rows = [line.split() for line in table.stdout.splitlines()]
    assert [name, "yes", "0/4", "-", "0"] in rows
    assert shown.returncode == 0, shown.stderr
    assert "state             paused since" in shown.stdout
    assert "max concurrency   4\n" in shown.stdout
    assert bad_rate.returncode == 2 and "not a rate" in bad_rate.stderr

    resumed = await run("resume", name)
    assert (resumed.returncode, resumed.stdout) == (0, f"{name}: active\n")
    assert answer(await run("show", name, "--json"))["paused"] is False

    deleted = await run("delete", name)
    assert (deleted.returncode, deleted.stdout) == (0, f"{name}: deleted\n"), deleted.stderr
    missing = await run("show", name, "--json")
    assert missing.returncode == 3 and json.loads(missing.stderr)["error"] == "not_found"


def test_a_job_naming_no_priority_takes_its_queue_s_default(gateway_url: str) -> None:
    """docs/flow-control.md, "A queue": ``submit`` without a priority runs the job at its
    queue's default priority; a job naming one keeps it; a queue without one gives medium."""
    email = new_user(gateway_url, "priority")
    urgent = queue_name()
    with JobsClient(gateway_url, email=email, password=PASSWORD) as jobs:
        jobs.queues.create(urgent, default_priority=3)
        quick = {"minSeconds": 0, "maxSeconds": 0}
        bare = jobs.submit("simulate", quick, queue=urgent)
        named = jobs.submit("simulate", quick, queue=urgent, priority=1)
        plain = jobs.submit("simulate", quick)
        finished = jobs.wait([bare.job_id, named.job_id, plain.job_id], timeout=60)
        by_id = {job.id: job for job in finished}
        assert [by_id[s.job_id].priority for s in (bare, named, plain)] == [3, 1, 2]
        assert {job.status for job in finished} == {"succeeded"}
