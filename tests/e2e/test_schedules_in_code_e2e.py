"""Schedules in code (docs/sdk.md) through the real stack: a handler module declaring a
``Cron``, loaded by two worker processes started at once with ``WORKER_SCHEDULES_PROJECT``,
leaves one schedule, marked as declared in code; the next deploy with another cron updates
it in place; the API may not change it (409); without the setting, one warning and no
schedule. And the client's ``upsert_schedule`` and the CLI's ``jobs schedules upsert``:
created, then updated in place, as a deploy script runs them every time."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jobs_client import AsyncJobsClient, Conflict, JobsClient, ValidationError
from jobs_common.tenancy import personal_project_id
from jobs_testing.extra_worker import ExtraWorker
from jobs_testing.stack import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

USER = ("user@test.com", "user123")
SUCCEED = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}

MODULE = """
from pydantic import BaseModel

from jobs_sdk import Cron, JobContext, handler


class Nightly(BaseModel):
    day: str = "yesterday"


@handler(
    "{job_type}",
    payload=Nightly,
    queue="{queue}",
    schedules=[Cron("{cron}", Nightly(day="today"), name="{name}", timezone="Europe/Berlin")],
)
async def nightly(ctx: JobContext, payload: Nightly) -> None:
    return None
"""


def started_worker(stack: Stack, log: Path, env: dict[str, str]) -> ExtraWorker:
    """A worker process serving only the test's module (on its own queue)."""
    worker = ExtraWorker(stack, log, env)
    worker.start()
    return worker


def write_module(directory: Path, module: str, **fields: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{module}.py").write_text(textwrap.dedent(MODULE.format(**fields)))
    return directory


async def until(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await check()
        if found:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


async def test_two_workers_declaring_a_cron_leave_one_schedule_updated_by_the_next_deploy(
    stack: Stack, gateway_url: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    module, name = f"e2e_cron_{suffix}", f"nightly-{suffix}"
    fields = {"job_type": f"e2e.nightly_{suffix}", "queue": f"cron-{suffix}", "name": name}
    env = {
        "WORKER_HANDLER_MODULES": module,
        "WORKER_HANDLER_ENTRY_POINTS": "false",
        "WORKER_SCHEDULES_PROJECT": str(personal_project_id(USER[0])),
        "WORKER_TYPES_INTERVAL": "1",
    }
    first = write_module(tmp_path / "v1", module, cron="0 3 * * *", **fields)
    v1_env = env | {"PYTHONPATH": os.pathsep.join([str(first), os.environ.get("PYTHONPATH", "")])}
    workers = [started_worker(stack, tmp_path / f"w{i}.log", v1_env) for i in range(2)]

    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:

        async def named() -> list[Any]:
            return [s for s in [s async for s in jobs.list_schedules()] if s.name == name]

        try:
            [declared] = await until("the declared schedule", named)
            await asyncio.sleep(2.5)  # both workers announced again, twice
            [still] = await named()
            assert still.id == declared.id and still.updated_at == declared.updated_at
            assert (declared.owner, declared.cron, declared.timezone) == (
                "code",
                "0 3 * * *",
                "Europe/Berlin",
            )
            assert declared.declared_in == module
            assert declared.declared_at is not None
            assert declared.job_template["payload"] == {"day": "today"}
            assert declared.job_template["queue"] == fields["queue"]

            with pytest.raises(Conflict, match="declared in code"):
                await jobs.upsert_schedule(name, "simulate", SUCCEED, cron="0 1 * * *")

            for worker in workers:  # the next deploy: the old workers go, a new one comes
                worker.stop()
            second = write_module(tmp_path / "v2", module, cron="30 4 * * *", **fields)
            v2_env = env | {
                "PYTHONPATH": os.pathsep.join([str(second), os.environ.get("PYTHONPATH", "")])
            }
            workers.append(started_worker(stack, tmp_path / "w2.log", v2_env))

            async def moved() -> Any:
                found = await named()
                return found if found and found[0].cron == "30 4 * * *" else None

            [updated] = await until("the new cron", moved)
            assert updated.id == declared.id
        finally:
            for worker in workers:
                worker.stop()
            for schedule in await named():
                await jobs.delete_schedule(schedule.id)
    logs = "".join((tmp_path / f"w{i}.log").read_text() for i in range(3))
    assert "WORKER_SCHEDULES_PROJECT" not in logs  # set: no warning


async def test_without_the_project_setting_a_worker_warns_once_and_declares_nothing(
    stack: Stack, gateway_url: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    module, name = f"e2e_cron_{suffix}", f"nightly-{suffix}"
    fields = {"job_type": f"e2e.nightly_{suffix}", "queue": f"cron-{suffix}", "name": name}
    directory = write_module(tmp_path, module, cron="0 3 * * *", **fields)
    env = {
        "WORKER_HANDLER_MODULES": module,
        "WORKER_HANDLER_ENTRY_POINTS": "false",
        "WORKER_TYPES_INTERVAL": "1",
        "PYTHONPATH": os.pathsep.join([str(directory), os.environ.get("PYTHONPATH", "")]),
    }
    worker = started_worker(stack, tmp_path / "w.log", env)
    try:
        await worker.wait_ready()
        await asyncio.sleep(2.5)  # announcements went out
    finally:
        worker.stop()
    log = (tmp_path / "w.log").read_text()
    assert log.count("WORKER_SCHEDULES_PROJECT is not set") == 1, log[-3000:]
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        assert [s async for s in jobs.list_schedules() if s.name == name] == []


def test_the_clients_upsert_creates_then_updates_in_place(gateway_url: str) -> None:
    name = f"deploy-{uuid.uuid4().hex[:8]}"
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        created = jobs.upsert_schedule(
            name, "simulate", SUCCEED, cron="0 3 * * *", timezone="Europe/Berlin"
        )
        try:
            assert (created.name, created.cron, created.timezone) == (
                name,
                "0 3 * * *",
                "Europe/Berlin",
            )
            assert created.raw["declaredIn"] is None
            jobs.pause_schedule(created.id)
            updated = jobs.upsert_schedule(
                name, "simulate", SUCCEED, cron="15 2 * * *", priority=3, max_attempts=2
            )
            assert (updated.id, updated.cron, updated.timezone) == (created.id, "15 2 * * *", "UTC")
            assert (updated.paused, updated.next_fire_at) == (True, None)  # the pause survives
            assert updated.job_template["maxAttempts"] == 2
            assert [s.id for s in jobs.list_schedules() if s.name == name] == [created.id]
        finally:
            jobs.delete_schedule(created.id)


async def test_the_async_clients_upsert_answers_the_same_again_and_refuses_a_bad_cron(
    gateway_url: str,
) -> None:
    name = f"deploy-{uuid.uuid4().hex[:8]}"
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        created = await jobs.upsert_schedule(name, "simulate", SUCCEED, cron="0 3 * * *")
        try:
            again = await jobs.upsert_schedule(name, "simulate", SUCCEED, cron="0 3 * * *")
            assert (again.id, again.updated_at) == (created.id, created.updated_at)
            with pytest.raises(ValidationError) as refused:
                await jobs.upsert_schedule(name, "simulate", SUCCEED, cron="61 * * * *")
            assert "cron" in str(refused.value)
            assert (await jobs.get_schedule(created.id)).cron == "0 3 * * *"  # unchanged
        finally:
            await jobs.delete_schedule(created.id)


def test_the_cli_upserts_by_name_every_time(gateway_url: str, tmp_path: Path) -> None:
    """``jobs schedules upsert`` as a deploy script runs it: twice, one schedule."""
    env = {k: v for k, v in os.environ.items() if k not in ("JOBS_TOKEN", "JOBS_URL")}
    env |= {"JOBS_URL": gateway_url, "XDG_CONFIG_HOME": str(tmp_path / "config")}

    def cli(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(sys.executable).parent / "jobs"), *argv],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
            start_new_session=True,  # no terminal: the password is read from stdin
        )

    assert cli("login", "--email", USER[0], stdin=USER[1] + "\n").returncode == 0
    name = f"cli-{uuid.uuid4().hex[:8]}"
    views = []
    for cron in ("0 3 * * *", "45 2 * * *"):
        done = cli(
            "schedules", "upsert", name, "--cron", cron, "--type", "simulate",
            "--payload", json.dumps(SUCCEED), "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        views.append(json.loads(done.stdout))
    try:
        assert views[0]["id"] == views[1]["id"]
        assert (views[0]["cron"], views[1]["cron"]) == ("0 3 * * *", "45 2 * * *")
    finally:
        assert cli("schedules", "delete", views[0]["id"]).returncode == 0
