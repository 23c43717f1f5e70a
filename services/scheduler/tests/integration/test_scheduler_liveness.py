"""Liveness of a real scheduler process: a consumer that cannot come back makes /health say
so, and the process exits (status 70) for its supervisor to start it afresh (issue 19)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from jobs_common import topology
from jobs_common.liveness import EXIT_UNHEALTHY
from jobs_testing.infra import free_port
from jobs_testing.plugin import RabbitServer
from jobs_testing.stack import ServiceProcess, Stack, StackConfig

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def scheduler_process(
    jobs_database_url: str, rabbit_url: str, tmp_path: Path
) -> Iterator[ServiceProcess]:
    """One scheduler process checking its own parts every 0.2 s, giving up after 2 s."""
    config = StackConfig(
        database_url=jobs_database_url,
        amqp_url=rabbit_url,
        mongo_url="mongodb://127.0.0.1:1",  # unused: only the scheduler starts
        scheduler_port=free_port(),
        workers=0,
        extra_env={
            "SCHEDULER_LIVENESS_INTERVAL_SECONDS": "0.2",
            "SCHEDULER_LIVENESS_GIVE_UP_SECONDS": "2",
            "SCHEDULER_MIGRATE_ON_START": "false",
        },
    )
    stack = Stack(config, tmp_path)
    service = stack.start_service("scheduler")
    try:
        stack.wait_ready(timeout=60, only=["scheduler"])
        yield service
    finally:
        stack.stop()


def wait_exit(process: subprocess.Popen[bytes], timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (code := process.poll()) is not None:
            return code
        time.sleep(0.1)
    return None


async def test_a_consumer_that_cannot_come_back_ends_the_process_with_status_70(
    scheduler_process: ServiceProcess, rabbit_server: RabbitServer, rabbit_vhost: str
) -> None:
    process = scheduler_process.process
    assert process is not None
    async with httpx.AsyncClient(base_url=scheduler_process.url, timeout=2) as client:
        assert (await client.get("/health")).json() == {"status": "ok"}
        # The queue goes away under the consumer: the broker cancels it, and it cannot be
        # consumed again while its queue is missing (what a restart, which declares the
        # topology, mends).
        vhost, queue = quote(rabbit_vhost, safe=""), quote(topology.RESULTS, safe="")
        await rabbit_server.management("DELETE", f"/queues/{vhost}/{queue}")
        seen: set[str] = set()
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            try:
                seen.add((await client.get("/health")).json()["status"])
            except (httpx.HTTPError, ValueError, KeyError):
                pass  # stopping: the port closes
            await asyncio.sleep(0.1)
    assert wait_exit(process, 30) == EXIT_UNHEALTHY
    assert "recovering" in seen
    assert scheduler_process.log_path is not None
    assert "liveness_give_up" in scheduler_process.log_path.read_text()
