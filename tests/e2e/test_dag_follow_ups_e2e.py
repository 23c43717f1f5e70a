"""Results along a DAG and jobs from a handler (docs/sdk.md, "Parent results" and
"Submitting from a handler") through the real stack: a batch member reads its parent's
result by ref; a handler's ``ctx.submit`` enqueues a job that runs as the same owner and
project with the same trace id; a handler that submits and then fails once is retried and
its follow-up enqueued once only."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from jobs_common.tenancy import personal_project_id
from jobs_testing.dag_handlers import DAG_MODULE
from jobs_testing.extra_worker import ExtraWorker
from jobs_testing.stack import Stack

from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


class DagWorker(ExtraWorker):
    """A third worker on the shared stack serving only the ``dag`` queue's handlers."""

    def __init__(self, stack: Stack, log: Path) -> None:
        env = {"WORKER_HANDLER_MODULES": DAG_MODULE, "WORKER_HANDLER_ENTRY_POINTS": "false"}
        super().__init__(stack, log, env, worker_id="dag-worker")

    async def ready(self, client: httpx.AsyncClient) -> None:
        for _ in range(300):
            try:
                if (await client.get(f"http://127.0.0.1:{self.port}/ready")).status_code == 200:
                    types = (await client.get("/api/job-types")).json()["types"]
                    live = {t["type"] for t in types if t.get("liveWorkers")}
                    if {"dag.produce", "dag.consume", "dag.spawn"} <= live:
                        return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
        raise AssertionError(f"the dag worker is not ready:\n{self.log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
async def dag_worker(
    stack: Stack, user: httpx.AsyncClient, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[DagWorker]:
    worker = DagWorker(stack, tmp_path_factory.mktemp("dag") / "dag-worker.log")
    worker.start()
    try:
        await worker.ready(user)
        yield worker
    finally:
        worker.stop()


async def job_rows(stack: Stack, query: str, *args: Any) -> list[asyncpg.Record]:
    connection = await asyncpg.connect(
        stack.config.database_url.replace("postgresql+asyncpg://", "postgresql://")
    )
    try:
        return list(await connection.fetch(query, *args))
    finally:
        await connection.close()


async def submit(client: httpx.AsyncClient, job_type: str, payload: dict[str, Any]) -> str:
    answer = await client.post("/api/jobs", json={"type": job_type, "payload": payload})
    assert answer.status_code == 202, answer.text
    job_id: str = answer.json()["jobId"]
    return job_id


async def test_a_batch_child_reads_its_parents_result_by_ref(
    dag_worker: DagWorker, user: httpx.AsyncClient
) -> None:
    answer = await user.post(
        "/api/batches",
        json={
            "jobs": [
                {"ref": "a", "type": "dag.produce", "payload": {"width": 640}},
                {"type": "dag.consume", "payload": {}, "dependsOn": ["ref:a"]},
            ]
        },
    )
    assert answer.status_code == 202, answer.text
    parent, child = answer.json()["jobIds"]
    done = await wait_for_job(user, child, {"succeeded", "dead"})
    assert done["status"] == "succeeded", done
    assert done["result"] == {
        "fromA": 640,
        "byRef": {"a": {"width": 640}},
        "byId": {parent: {"width": 640}},
    }


async def test_a_follow_up_runs_as_the_same_owner_and_project_with_the_trace_id(
    dag_worker: DagWorker, user: httpx.AsyncClient, stack: Stack
) -> None:
    tag = uuid.uuid4().hex
    for job_type in ("dag.spawn", "dag.spawn_sync"):
        spawner = await submit(user, job_type, {"tag": tag})
        done = await wait_for_job(user, spawner, {"succeeded", "dead"})
        assert done["status"] == "succeeded", done
        child = done["result"]["child"]
        assert (await wait_for_job(user, child, {"succeeded", "dead"}))["status"] == "succeeded"
        rows = await job_rows(
            stack,
            "SELECT id::text, submitted_by, project_id, trace_id FROM jobs "
            "WHERE id = ANY($1::uuid[])",
            [spawner, child],
        )
        by_id = {row["id"]: row for row in rows}
        assert by_id[child]["submitted_by"] == by_id[spawner]["submitted_by"] == "user@test.com"
        assert by_id[child]["project_id"] == by_id[spawner]["project_id"]
        assert by_id[child]["project_id"] == personal_project_id("user@test.com")
        assert by_id[child]["trace_id"] == by_id[spawner]["trace_id"]


async def test_a_retried_attempt_enqueues_its_follow_up_once(
    dag_worker: DagWorker, user: httpx.AsyncClient, stack: Stack
) -> None:
    tag = uuid.uuid4().hex
    spawner = await submit(user, "dag.spawn", {"tag": tag, "fail_first": True})
    done = await wait_for_job(user, spawner, {"succeeded", "dead"})
    assert done["status"] == "succeeded", done
    assert [a["status"] for a in done["attempts"]][:1] == ["failed"]
    assert len(done["attempts"]) == 2
    child = done["result"]["child"]
    assert (await wait_for_job(user, child, {"succeeded", "dead"}))["status"] == "succeeded"
    await asyncio.sleep(1.0)  # a second follow-up, had one been submitted, is recorded by now
    rows = await job_rows(
        stack, "SELECT id::text FROM jobs WHERE type = 'dag.produce' AND payload->>'tag' = $1", tag
    )
    assert [row["id"] for row in rows] == [child]
