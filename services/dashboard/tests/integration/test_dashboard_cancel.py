"""POST /api/jobs/{id}/cancel: a confirmed CancelRequested on jobs.cancel, then 200 or 202;
a job not recorded yet is waited for only when the submission service accepted it."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aio_pika
import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import CancelRequested, parse_message
from jobs_common.jobstore import jobs
from jobs_common.topology import CANCEL
from jobs_dashboard.settings import Settings
from jobs_testing.asgi_server import serve_app
from jobs_testing.infra import free_port

from .conftest import next_message

pytestmark = pytest.mark.integration


ACCEPTED: set[str] = set()  # job ids the fake submission service says it accepted


@pytest.fixture
async def submission_url() -> AsyncIterator[str]:
    """The submission service's status route as the dashboard asks it: 200 for an id in
    ACCEPTED, 404 for any other."""

    async def status(scope: Any, receive: Any, send: Any) -> None:
        job_id = scope["path"].split("/")[-2]
        code = 200 if job_id in ACCEPTED else 404
        await send({"type": "http.response.start", "status": code, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async with serve_app(status, free_port()) as url:
        yield url


@pytest.fixture
def settings(settings: Settings, submission_url: str) -> Settings:
    """Short waits: nothing plays the scheduler unless a test does."""
    return settings.model_copy(
        update={
            "cancel_wait_seconds": 0.5,
            "cancel_record_wait_seconds": 0.3,
            "submission_url": submission_url,
        }
    )


async def test_cancel_answers_200_once_the_scheduler_cancelled_the_job(
    client: httpx.AsyncClient,
    auth: Any,
    job_factory: Any,
    command_queue: Any,
    store_engine: AsyncEngine,
    settings: Settings,
) -> None:
    settings.cancel_wait_seconds = 10.0  # the app reads it per request
    queue = await command_queue(CANCEL)
    job_id = await job_factory.job(status="scheduled", trace_id="trace-c")
    request = asyncio.create_task(
        client.post(f"/api/jobs/{job_id}/cancel", json={"reason": "not needed"}, headers=auth.user)
    )
    message = await next_message(queue)
    command = parse_message(CancelRequested, message.body)
    assert (command.job_id, command.requested_by, command.reason) == (
        job_id,
        auth.user_email,
        "not needed",
    )
    assert command.trace_id == "trace-c"
    assert message.type == "job.cancel"
    assert message.delivery_mode == aio_pika.DeliveryMode.PERSISTENT
    assert not request.done()
    # the scheduler's side: pending/scheduled/queued/blocked -> cancelled at once
    async with store_engine.begin() as connection:
        await connection.execute(update(jobs).where(jobs.c.id == job_id).values(status="cancelled"))
    response = await request
    assert response.status_code == 200, response.text
    assert response.json() == {"jobId": str(job_id), "status": "cancelled"}


async def test_cancel_of_a_running_job_is_202_while_it_still_runs(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, command_queue: Any
) -> None:
    queue = await command_queue(CANCEL)
    job_id = await job_factory.job(status="running", submitted_by=auth.other_email)
    response = await client.post(f"/api/jobs/{job_id}/cancel", headers=auth.admin)
    assert response.status_code == 202, response.text
    assert response.json() == {"jobId": str(job_id), "status": "cancel_requested"}
    command = parse_message(CancelRequested, (await next_message(queue)).body)
    assert (command.job_id, command.requested_by, command.reason) == (
        job_id,
        auth.admin_email,
        None,
    )


async def test_cancel_stops_waiting_when_the_job_finished_otherwise(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, command_queue: Any, settings: Settings
) -> None:
    settings.cancel_wait_seconds = 30.0
    queue = await command_queue(CANCEL)
    job_id = await job_factory.job(status="running")
    request = asyncio.create_task(client.post(f"/api/jobs/{job_id}/cancel", headers=auth.user))
    await next_message(queue)
    async with job_factory.engine.begin() as connection:
        await connection.execute(update(jobs).where(jobs.c.id == job_id).values(status="succeeded"))
    async with asyncio.timeout(10):  # far below the 30 s wait
        response = await request
    assert response.status_code == 202
    assert response.json()["status"] == "cancel_requested"


@pytest.mark.parametrize("status", ["succeeded", "dead", "cancelled"])
async def test_cancel_of_a_finished_job_is_409(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, command_queue: Any, status: str
) -> None:
    queue = await command_queue(CANCEL)
    job_id = await job_factory.job(status=status)
    response = await client.post(f"/api/jobs/{job_id}/cancel", headers=auth.user)
    assert response.status_code == 409
    assert response.json()["error"] == "conflict"
    assert status in response.json()["message"]
    assert (await queue.declare()).message_count == 0


async def test_cancel_of_a_hidden_or_unknown_job_is_404(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, command_queue: Any
) -> None:
    queue = await command_queue(CANCEL)
    job_id = await job_factory.job(status="queued", submitted_by=auth.other_email)
    assert (await client.post(f"/api/jobs/{job_id}/cancel", headers=auth.user)).status_code == 404
    unknown = await client.post(f"/api/jobs/{uuid.uuid4()}/cancel", headers=auth.user)
    assert unknown.status_code == 404
    too_long = await client.post(
        f"/api/jobs/{job_id}/cancel", json={"reason": "x" * 1001}, headers=auth.other
    )
    assert too_long.status_code == 422
    assert too_long.json()["details"][0]["field"] == "reason"
    assert (await client.post(f"/api/jobs/{job_id}/cancel")).status_code == 401
    assert (await queue.declare()).message_count == 0


async def test_cancel_waits_for_a_job_accepted_a_moment_ago_to_be_recorded(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, command_queue: Any, settings: Settings
) -> None:
    settings.cancel_record_wait_seconds = 10.0
    queue = await command_queue(CANCEL)
    job_id = uuid.uuid4()
    ACCEPTED.add(str(job_id))
    request = asyncio.create_task(client.post(f"/api/jobs/{job_id}/cancel", headers=auth.user))
    await asyncio.sleep(0.2)  # the request is waiting for the record, not answering 404
    assert not request.done()
    await job_factory.job(id=job_id, status="scheduled")
    message = await next_message(queue)
    assert parse_message(CancelRequested, message.body).job_id == job_id
    response = await request
    assert response.status_code == 202  # nothing plays the scheduler here


async def test_cancel_of_an_id_nobody_submitted_is_404_without_waiting_for_a_record(
    client: httpx.AsyncClient, auth: Any, settings: Settings
) -> None:
    settings.cancel_record_wait_seconds = 600.0
    async with asyncio.timeout(60):  # far below the record wait
        unknown = await client.post(f"/api/jobs/{uuid.uuid4()}/cancel", headers=auth.user)
    assert unknown.status_code == 404
