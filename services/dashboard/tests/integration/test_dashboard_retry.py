"""POST /api/jobs/{id}/retry: a confirmed RetryRequested on jobs.retry, or 404/409."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aio_pika
import httpx
import pytest
from aio_pika.abc import AbstractQueue
from fastapi import FastAPI

from jobs_common.contracts import RetryRequested, parse_message
from jobs_common.topology import RETRY

pytestmark = pytest.mark.integration


@pytest.fixture
async def retry_queue(app: FastAPI, rabbit_url: str) -> AsyncIterator[AbstractQueue]:
    """jobs.retry of this test's vhost (declared by the app's lifespan)."""
    connection = await aio_pika.connect(rabbit_url)
    channel = await connection.channel()
    queue = await channel.declare_queue(RETRY, passive=True)
    yield queue
    await connection.close()


async def next_message(queue: AbstractQueue, timeout: float = 10.0) -> aio_pika.IncomingMessage:
    async with asyncio.timeout(timeout), queue.iterator() as messages:
        async for message in messages:
            await message.ack()
            assert isinstance(message, aio_pika.IncomingMessage)
            return message
    raise AssertionError("no message")


async def test_retry_of_a_dead_job_publishes_retry_requested(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, retry_queue: AbstractQueue
) -> None:
    job_id = await job_factory.job(status="dead", trace_id="trace-abc")
    response = await client.post(f"/api/jobs/{job_id}/retry", headers=auth.user)
    assert response.status_code == 202, response.text
    assert response.json() == {"jobId": str(job_id), "status": "retry_requested"}

    message = await next_message(retry_queue)
    command = parse_message(RetryRequested, message.body)
    assert command.job_id == job_id
    assert command.requested_by == auth.user_email
    assert command.trace_id == "trace-abc"
    assert message.message_id == str(command.message_id)
    assert message.delivery_mode == aio_pika.DeliveryMode.PERSISTENT
    assert message.type == "job.retry"


async def test_admin_may_retry_anyones_dead_job(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, retry_queue: AbstractQueue
) -> None:
    job_id = await job_factory.job(status="dead", submitted_by=auth.other_email)
    response = await client.post(f"/api/jobs/{job_id}/retry", headers=auth.admin)
    assert response.status_code == 202
    command = parse_message(RetryRequested, (await next_message(retry_queue)).body)
    assert (command.job_id, command.requested_by) == (job_id, auth.admin_email)


@pytest.mark.parametrize(
    "status", ["pending", "blocked", "scheduled", "queued", "running", "failed", "succeeded"]
)
async def test_retry_of_a_job_that_is_not_dead_is_409(
    client: httpx.AsyncClient,
    auth: Any,
    job_factory: Any,
    retry_queue: AbstractQueue,
    status: str,
) -> None:
    job_id = await job_factory.job(status=status)
    response = await client.post(f"/api/jobs/{job_id}/retry", headers=auth.user)
    assert response.status_code == 409
    assert response.json()["error"] == "conflict"
    assert status in response.json()["message"]
    assert (await retry_queue.declare()).message_count == 0


async def test_retry_of_other_users_or_unknown_job_is_404(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, retry_queue: AbstractQueue
) -> None:
    job_id = await job_factory.job(status="dead", submitted_by=auth.other_email)
    hidden = await client.post(f"/api/jobs/{job_id}/retry", headers=auth.user)
    assert hidden.status_code == 404
    assert hidden.json()["error"] == "not_found"
    unknown = await client.post(f"/api/jobs/{uuid.uuid4()}/retry", headers=auth.user)
    assert unknown.status_code == 404
    assert (await client.post("/api/jobs/nope/retry", headers=auth.user)).status_code == 422
    assert (await client.post(f"/api/jobs/{job_id}/retry")).status_code == 401
    assert (await retry_queue.declare()).message_count == 0


async def test_retry_when_the_broker_is_gone_is_503(
    app: FastAPI, client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(status="dead")
    await app.state.bus.connection.close()
    response = await client.post(f"/api/jobs/{job_id}/retry", headers=auth.user)
    assert response.status_code == 503
    assert response.json()["error"] == "service_unavailable"
    ready = await client.get("/ready")
    assert ready.status_code == 503
    assert ready.json()["checks"] == {"database": True, "broker": False}
