"""A schedule of a built-in type is checked like any other type's: by the submission service,
against the schema the type's worker announced (a newer announcement changes what is
accepted), and refused with the registry's error while no worker has announced the type."""

from __future__ import annotations

import asyncio
import copy
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import WorkerTypes, utcnow
from jobs_common.jobstore import schedules
from jobs_common.mongo import create_client
from jobs_submission.adapters.job_types import JobTypeStore
from jobs_testing.builtin_types import builtin_types

pytestmark = [pytest.mark.integration, pytest.mark.registry]  # payload checks

SIMULATE = {"type": "simulate", "priority": 2, "payload": {"minSeconds": 0, "maxSeconds": 2}}


async def create(client: httpx.AsyncClient, headers: dict[str, str], **template: Any) -> Any:
    body = {
        "name": f"sim-{len(template)}-{utcnow().timestamp()}",
        "cron": "0 7 * * *",
        "timezone": "UTC",
        "jobTemplate": {**SIMULATE, **template},
    }
    return await client.post("/api/schedules", json=body, headers=headers)


async def count(store_engine: AsyncEngine) -> int:
    async with store_engine.connect() as connection:
        return int((await connection.execute(select(func.count()).select_from(schedules))).scalar())


async def test_a_builtin_template_is_checked_against_the_announced_schema(
    client: httpx.AsyncClient,
    auth: Any,
    store_engine: AsyncEngine,
    mongo_url: str,
    mongo_db_name: str,
) -> None:
    made = await create(client, auth.user)
    assert made.status_code == 201, made.text
    stored = made.json()["jobTemplate"]
    assert stored["payload"]["failureRate"] == 0.0  # the schema's default, filled in there
    assert (stored["maxAttempts"], stored["timeoutSeconds"]) == (3, 300)  # the handler's

    # A newer worker's simulate allows at most 1 second: the registry's owner checks by it.
    (simulate,) = [info for info in builtin_types() if info.job_type == "simulate"]
    stricter = copy.deepcopy(simulate.payload_schema)
    stricter["properties"]["maxSeconds"]["maximum"] = 1
    mongo = create_client(mongo_url)
    try:
        await JobTypeStore(mongo, mongo_db_name).record(
            WorkerTypes(
                worker_id="w-new",
                types=[simulate.model_copy(update={"payload_schema": stricter})],
                sent_at=utcnow() + timedelta(seconds=1),
            )
        )
    finally:
        await mongo.close()
    async with asyncio.timeout(15):  # the submission service reloads its registry every 2 s
        while (refused := await create(client, auth.user)).status_code != 422:  # noqa: ASYNC110
            await asyncio.sleep(0.2)
    assert [d["field"] for d in refused.json()["details"]] == ["jobTemplate.payload.maxSeconds"]
    stored_before = await count(store_engine)  # those accepted before the reload
    assert (await create(client, auth.user)).status_code == 422
    assert await count(store_engine) == stored_before  # a refusal stores nothing


async def test_a_type_no_worker_announced_is_refused_naming_it(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    refused = await create(client, auth.user, type="acme.never", payload={})
    assert refused.status_code == 422, refused.text
    (detail,) = refused.json()["details"]
    assert detail["field"] == "jobTemplate.type"
    assert detail["message"].startswith(
        "unknown job type 'acme.never': no worker has announced it yet"
    )
    assert await count(store_engine) == 0
