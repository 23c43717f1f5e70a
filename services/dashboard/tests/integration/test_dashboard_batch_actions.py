"""A batch's id prefix in the listing (8+ hex digits or the whole id; shorter: 422) and
``POST /api/batches/{id}/retry-failed`` (one confirmed RetryRequested per dead member)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import aio_pika
import httpx
import pytest
from aio_pika.abc import AbstractQueue

from jobs_common.contracts import RetryRequested, parse_message
from jobs_common.jobstore import batches
from jobs_common.tenancy import personal_project_id
from jobs_common.topology import RETRY

pytestmark = pytest.mark.integration


async def drain(queue: AbstractQueue, count: int) -> list[RetryRequested]:
    found: list[RetryRequested] = []
    async with asyncio.timeout(10), queue.iterator() as messages:
        async for message in messages:
            await message.ack()
            found.append(parse_message(RetryRequested, message.body))
            if len(found) == count:
                break
    await asyncio.sleep(0)
    extra = await queue.get(fail=False)
    assert extra is None, "more retries than dead members"
    return found


async def test_the_list_filters_by_an_id_prefix_of_8_or_more(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    wanted = uuid.UUID("1a2b3c4d-0000-4000-8000-000000000001")
    neighbour = uuid.UUID("1a2b3c4e-0000-4000-8000-000000000002")
    for batch_id in (wanted, neighbour):
        await job_factory.insert(batches, id=batch_id, submitted_by=auth.user_email, total=1)

    def ids(answer: httpx.Response) -> list[str]:
        assert answer.status_code == 200, answer.text
        return [b["batchId"] for b in answer.json()["items"]]

    async def listed(prefix: str) -> httpx.Response:
        return await client.get("/api/batches", params={"batchId": prefix}, headers=auth.user)

    assert ids(await listed("1a2b3c4d")) == [str(wanted)]
    assert ids(await listed("1A2B3C4D-0000")) == [str(wanted)]
    assert ids(await listed(str(wanted))) == [str(wanted)]
    assert ids(await listed("1a2b3c4f")) == []
    assert (
        ids(await client.get("/api/batches", params={"batchId": "1a2b3c4d"}, headers=auth.other))
        == []
    )
    for refused in ("1a2b3c4", "1a2b3c4z", ""):
        answer = await listed(refused)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"] == "validation_error"
        assert answer.json()["details"][0]["field"] == "batchId"
        assert "8 characters" in answer.json()["details"][0]["message"]


async def test_retry_failed_retries_every_dead_member_once(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, rabbit_url: str
) -> None:
    batch_id = uuid.uuid4()
    project = personal_project_id(auth.user_email)
    await job_factory.insert(
        batches, id=batch_id, submitted_by=auth.user_email, project_id=project, total=4
    )
    dead = {
        await job_factory.job(status="dead", batch_id=batch_id, project_id=project)
        for _ in range(2)
    }
    for status in ("succeeded", "cancelled"):
        await job_factory.job(status=status, batch_id=batch_id, project_id=project)
    await job_factory.job(status="dead", project_id=project)  # not a member

    connection = await aio_pika.connect(rabbit_url)
    try:
        queue = await (await connection.channel()).declare_queue(RETRY, passive=True)
        path = f"/api/batches/{batch_id}/retry-failed"
        assert (await client.post(path, headers=auth.other)).status_code == 404
        answer = await client.post(path, headers=auth.user)
        assert answer.status_code == 202, answer.text
        assert answer.json()["status"] == "retry_requested"
        assert {uuid.UUID(j) for j in answer.json()["jobIds"]} == dead
        commands = await drain(queue, 2)
        assert {c.job_id for c in commands} == dead
        assert {c.requested_by for c in commands} == {auth.user_email}
    finally:
        await connection.close()

    nothing = uuid.uuid4()
    await job_factory.insert(batches, id=nothing, submitted_by=auth.user_email, total=1)
    await job_factory.job(status="succeeded", batch_id=nothing)
    none_dead = await client.post(f"/api/batches/{nothing}/retry-failed", headers=auth.user)
    assert none_dead.status_code == 409, none_dead.text
    assert none_dead.json()["error"] == "conflict"
