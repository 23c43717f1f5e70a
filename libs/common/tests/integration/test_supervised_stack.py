"""``make dev``'s supervision over the real stack: two scheduler replicas on ports of their
own, and a worker killed with SIGKILL comes back and becomes ready while the rest runs on."""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from pathlib import Path

import httpx
import pytest

from jobs_testing.infra import free_port
from jobs_testing.plugin import PostgresServer, RabbitServer
from jobs_testing.stack import Stack, StackConfig
from jobs_testing.supervisor import Backoff, supervise_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def test_a_killed_worker_is_restarted_and_ready_again(
    postgres_server: PostgresServer,
    rabbit_server: RabbitServer,
    mongo_url: str,
    tmp_path: Path,
) -> None:
    database = f"sup_{uuid.uuid4().hex[:12]}"
    database_url = await postgres_server.create(database)
    vhost = await rabbit_server.create_vhost()
    config = StackConfig(
        database_url=database_url,
        amqp_url=rabbit_server.url_for(vhost),
        mongo_url=mongo_url,
        mongo_db=f"sup_{uuid.uuid4().hex[:8]}",
        artifacts_dir=str(tmp_path / "artifacts"),
        gateway_port=free_port(),
        submission_port=free_port(),
        scheduler_port=free_port(),
        dashboard_port=free_port(),
        worker_ports=(free_port(),),
        workers=1,
        schedulers=2,
        environment="test",
        extra_env={"WORKER_DRAIN_TIMEOUT": "2"},
    )
    stack = Stack(config, tmp_path / "logs")
    reports: list[str] = []
    supervisor = supervise_stack(stack, backoff=Backoff(initial=0.2), report=reports.append)
    try:
        assert [s.name for s in stack.services.values() if s.module == "jobs_scheduler"] == [
            "scheduler",
            "scheduler-2",
        ]
        assert stack.services["scheduler-2"].port != config.scheduler_port
        supervisor.start()
        await asyncio.to_thread(stack.wait_ready, 90.0)
        killed = stack.services["worker-1"].process
        gateway = stack.services["gateway"].process
        assert killed is not None and gateway is not None
        killed.send_signal(signal.SIGKILL)

        deadline = time.monotonic() + 30
        while supervisor.restarts("worker-1") < 1:
            assert time.monotonic() < deadline, reports
            await asyncio.sleep(0.1)
        await asyncio.to_thread(stack.wait_ready, 60.0, ["worker-1"])
        restarted = stack.services["worker-1"].process
        assert restarted is not None and restarted.pid != killed.pid
        assert reports[0].startswith("worker-1 exited (signal SIGKILL); restarting in 0.2 s")
        # The rest kept running: same gateway process, both schedulers ready.
        assert stack.services["gateway"].process is gateway and gateway.poll() is None
        async with httpx.AsyncClient(timeout=5) as client:
            for name in ("scheduler", "scheduler-2"):
                response = await client.get(stack.services[name].url + "/ready")
                assert response.status_code == 200, name
    finally:
        codes = await asyncio.to_thread(supervisor.stop)
        await rabbit_server.delete_vhost(vhost)
        await postgres_server.drop(database)
    assert set(codes) == set(stack.services)
