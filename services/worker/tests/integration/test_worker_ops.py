"""Prefetch per ready queue seen by the broker; /health, /ready and /metrics of the app."""

from __future__ import annotations

import asyncio
from typing import Any, cast
from urllib.parse import quote

import aiormq
import httpx
import pytest

from jobs_common.topology import READY_HIGH, READY_LOW, READY_MEDIUM, READY_QUEUES, lane_for
from jobs_testing.plugin import RabbitServer
from jobs_worker.service import create_app
from jobs_worker.settings import Settings

pytestmark = pytest.mark.integration


async def test_prefetch_per_ready_queue_in_management_api(
    start_worker: Any, rabbit_server: RabbitServer, rabbit_vhost: str
) -> None:
    await start_worker()  # the only consumer of the ready queues on this fresh vhost
    async with asyncio.timeout(30):
        while True:
            response = await rabbit_server.management(
                "GET", f"/consumers/{quote(rabbit_vhost, safe='')}"
            )
            prefetch = {
                c["queue"]["name"]: c["prefetch_count"]
                for c in response.json()
                if c["queue"]["name"] in READY_QUEUES
            }
            if len(prefetch) == 3:
                break
            await asyncio.sleep(0.25)
    assert prefetch == {READY_HIGH: 20, READY_MEDIUM: 10, READY_LOW: 5}


async def test_health_ready_and_metrics(worker_settings: Settings) -> None:
    app = create_app(worker_settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://worker") as client:
        assert (await client.get("/ready")).status_code == 503  # not started
        async with app.router.lifespan_context(app):
            health = await client.get("/health")
            assert health.json() == {"status": "ok"}
            ready = await client.get("/ready")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"] == {
                "amqp": True,
                f"consumers:{READY_HIGH}": True,
                f"consumers:{READY_MEDIUM}": True,
                f"consumers:{READY_LOW}": True,
                "consumers:control": True,
                # Each served type's lane (docs/worker.md): the built-in types here.
                **{
                    f"consumers:{lane_for(t)}": True
                    for t in ("email", "image_resize", "report_generation", "simulate")
                },
            }
            metrics = (await client.get("/metrics")).text
            for name in (
                "worker_active_jobs",
                "jobs_started_total",
                "worker_jobs_finished_total",
                "worker_job_duration_seconds",
                "worker_poison_messages_total",
                "worker_heartbeats_total",
                "worker_cancellations_total",
                "worker_job_log_lines_published_total",
                "worker_job_log_lines_dropped_total",
            ):
                assert name in metrics
        after = await client.get("/ready")
        assert after.status_code == 503
        assert after.json()["status"] == "not_ready"


async def test_a_ready_consumer_gone_under_an_open_channel_is_not_ready_beside_another_worker(
    start_worker: Any,
) -> None:
    first = await start_worker()
    await start_worker()  # its consumer keeps the broker's count of the queue above zero
    assert (await first.ready_checks())[f"consumers:{READY_MEDIUM}"]
    consumer = first._consumers[READY_MEDIUM]
    underlay = cast(aiormq.Channel, await consumer.channel.get_underlay_channel())
    await underlay.basic_cancel(consumer.consumer_tag)  # aio-pika none the wiser
    checks = await first.ready_checks()
    assert checks[f"consumers:{READY_MEDIUM}"] is False
    assert checks[f"consumers:{READY_HIGH}"] is True
