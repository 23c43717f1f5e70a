"""The whole platform as real processes on a fresh database, vhost and Mongo database."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from jobs_common.testing.infra import free_port
from jobs_common.testing.plugin import (
    PostgresServer,
    RabbitServer,
    SmtpSink,
    running_smtp_sink,
)
from jobs_common.testing.stack import Stack, StackConfig


@pytest.fixture(scope="session")
async def e2e_smtp() -> AsyncIterator[SmtpSink]:
    with running_smtp_sink() as sink:
        yield sink


@pytest.fixture(scope="session")
async def stack(
    postgres_server: PostgresServer,
    rabbit_server: RabbitServer,
    mongo_url: str,
    e2e_smtp: SmtpSink,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    database = f"e2e_{uuid.uuid4().hex[:12]}"
    database_url = await postgres_server.create(database)
    vhost = await rabbit_server.create_vhost()
    base = tmp_path_factory.mktemp("stack")
    config = StackConfig(
        database_url=database_url,
        amqp_url=rabbit_server.url_for(vhost),
        mongo_url=mongo_url,
        mongo_db=f"e2e_{uuid.uuid4().hex[:8]}",
        smtp_host=e2e_smtp.host,
        smtp_port=e2e_smtp.port,
        artifacts_dir=str(base / "artifacts"),
        gateway_port=free_port(),
        submission_port=free_port(),
        scheduler_port=free_port(),
        dashboard_port=free_port(),
        worker_ports=(free_port(), free_port()),
        workers=2,
        environment="test",
        extra_env={
            # Fast retries so the retry paths finish within the test's patience.
            "SCHEDULER_RETRY_BASE_DELAY_MS": "200",
            "SCHEDULER_RETRY_MAX_DELAY_MS": "1000",
            "SCHEDULER_TIMEOUT_GRACE_SECONDS": "2",
            # Short leases so a silent worker's job moves on within the test's patience.
            "SCHEDULER_LEASE_SECONDS": "3",
        },
    )
    running = Stack(config, base / "logs")
    running.start()
    try:
        await asyncio.to_thread(running.wait_ready, 90.0)
        yield running
    finally:
        await asyncio.to_thread(running.stop)
        await rabbit_server.delete_vhost(vhost)
        await postgres_server.drop(database)


@pytest.fixture(scope="session")
def gateway_url(stack: Stack) -> str:
    return stack.services["gateway"].url


async def login(gateway_url: str, email: str, password: str) -> str:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=10) as client:
        response = await client.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    token: str = response.json()["token"]
    return token


@pytest.fixture(scope="session")
async def admin(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    token = await login(gateway_url, "admin@test.com", "admin123")
    async with httpx.AsyncClient(
        base_url=gateway_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        yield client


@pytest.fixture(scope="session")
async def user(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    token = await login(gateway_url, "user@test.com", "user123")
    async with httpx.AsyncClient(
        base_url=gateway_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        yield client


async def wait_for_job(
    client: httpx.AsyncClient, job_id: str, statuses: set[str], timeout: float = 60.0
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    last: dict[str, Any] = {}
    while asyncio.get_running_loop().time() < deadline:
        response = await client.get(f"/api/jobs/{job_id}")
        if response.status_code == 200:
            last = response.json()
            if last["status"] in statuses:
                return last
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} did not reach {statuses}; last seen {last}")
