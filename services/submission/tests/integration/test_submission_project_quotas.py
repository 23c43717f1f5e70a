"""A project's quotas at submission (issue 33, point 4; docs/flow-control.md, "Quotas"): most
jobs waiting and most submitted per UTC day, as the scheduler (the real internal route, over
HTTP, on this test's job store) says. A submission past either is refused whole with 429
``too_many_requests`` and ``Retry-After``, nothing of it stored; a scheduler that does not
answer leaves the quotas unknown and the jobs accepted."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi import FastAPI
from prometheus_client import REGISTRY
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from jobs_common.contracts import JobSubmitted, utcnow
from jobs_common.db import async_url
from jobs_common.error_handlers import install_error_handlers
from jobs_common.jobstore import project_flow
from jobs_common.tenancy import personal_project_id
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.api.project_flow import router as scheduler_project_flow
from jobs_scheduler.app.intake import record_jobs
from jobs_scheduler.service import job_defaults
from jobs_scheduler.settings import Settings as SchedulerSettings
from jobs_testing.asgi_server import serve_app
from jobs_testing.infra import free_port

from .conftest import TOKEN, USER, AppFactory

pytestmark = pytest.mark.integration

PROJECT = personal_project_id(USER.email)
NOOP: dict[str, Any] = {"type": "simulate", "priority": 2, "payload": {}}


@pytest.fixture
async def store(jobs_database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(async_url(jobs_database_url))
    yield engine
    await engine.dispose()


@pytest.fixture
async def scheduler_url(store: AsyncEngine) -> AsyncIterator[str]:
    api = FastAPI()
    install_error_handlers(api)
    api.state.internal_token = TOKEN
    api.state.engine = store
    api.include_router(scheduler_project_flow)
    async with serve_app(api, free_port()) as url:
        yield url


async def set_quotas(store: AsyncEngine, **quotas: int | None) -> None:
    async with store.begin() as connection:
        await connection.execute(
            insert(project_flow).values(project_id=PROJECT, updated_by="test", **quotas)
        )


async def waiting_in_store(store: AsyncEngine, jobs_database_url: str, count: int) -> None:
    """``count`` jobs of the project recorded by the scheduler, queued."""
    settings = SchedulerSettings(database_url=jobs_database_url)
    batch = [
        JobSubmitted(
            job_id=uuid.uuid4(),
            job_type="simulate",
            priority=2,
            payload={},
            submitted_by=USER.email,
            project_id=PROJECT,
            max_attempts=1,
            timeout_seconds=30,
            submitted_at=utcnow(),
        )
        for _ in range(count)
    ]
    async with store.begin() as connection:
        changes = Changes()
        await record_jobs(connection, changes, batch, job_defaults(settings))
        await changes.flush(connection)


def throttled(reason: str) -> float:
    return REGISTRY.get_sample_value("jobs_throttled_total", {"reason": reason}) or 0.0


def batch(size: int) -> dict[str, Any]:
    return {"jobs": [NOOP] * size}


async def test_a_daily_quota_refuses_a_batch_whole_and_then_single_jobs(
    app_factory: AppFactory, store: AsyncEngine, scheduler_url: str, stored: Any
) -> None:
    await set_quotas(store, max_submitted_per_day=5)
    before = throttled("max_submitted_per_day")
    async with app_factory(scheduler_urls=[scheduler_url]) as app:
        assert (await app.submit_batch(batch(3))).status_code == 202
        documents = await stored()
        refused = await app.submit_batch(batch(3))
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"] == "too_many_requests"
        assert "5 jobs submitted per day" in refused.json()["message"]
        assert 1 <= int(refused.headers["Retry-After"]) <= 86_400
        assert await stored() == documents  # nothing of the batch (the counter is not new)
        assert [(await app.submit(NOOP)).status_code for _ in range(3)] == [202, 202, 429]
    assert throttled("max_submitted_per_day") - before == 4  # three jobs, then one


async def test_a_waiting_quota_counts_the_scheduler_s_jobs_and_those_accepted_since(
    app_factory: AppFactory, store: AsyncEngine, scheduler_url: str, jobs_database_url: str
) -> None:
    await set_quotas(store, max_waiting=4)
    await waiting_in_store(store, jobs_database_url, 2)
    async with app_factory(scheduler_urls=[scheduler_url], project_quota_refresh_seconds=60) as app:
        refused = await app.submit_batch(batch(3))  # 2 + 3 > 4
        assert refused.status_code == 429, refused.text
        assert refused.headers["Retry-After"] == "5"
        assert "at most 4 jobs waiting" in refused.json()["message"]
        assert (await app.submit_batch(batch(2))).status_code == 202
        assert (await app.submit(NOOP)).status_code == 429  # 4 waiting: two here since


async def test_without_an_answer_from_the_scheduler_jobs_are_accepted(
    app_factory: AppFactory, store: AsyncEngine
) -> None:
    await set_quotas(store, max_submitted_per_day=1)
    unknown = REGISTRY.get_sample_value("submission_project_quota_unknown_total") or 0.0
    async with app_factory(scheduler_urls=[f"http://127.0.0.1:{free_port()}"]) as app:
        assert [(await app.submit(NOOP)).status_code for _ in range(2)] == [202, 202]
    assert (REGISTRY.get_sample_value("submission_project_quota_unknown_total") or 0) > unknown
