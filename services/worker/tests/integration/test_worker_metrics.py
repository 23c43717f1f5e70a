"""The worker's part of the metric catalogue: attempts started by type, and the deliveries it
is working on right now, driven by real deliveries and read back from its own /metrics."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from jobs_common.topology import RESULTS, RUNNING
from jobs_testing.waiting import eventually
from jobs_testing.worker_messages import Observer, make_dispatch, quick_simulate, until
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.service import create_app
from jobs_worker.settings import Settings

pytestmark = pytest.mark.integration


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = (await client.get("/metrics")).text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


STARTED = ("jobs_started_total", frozenset({("type", "simulate")}))
ACTIVE = ("worker_active_jobs", frozenset())


async def test_started_attempts_and_active_jobs(
    worker_settings: Settings, observer: Observer
) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    app = create_app(worker_settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://worker") as client,
        app.router.lifespan_context(app),
    ):
        runtime: WorkerRuntime = app.state.runtime
        before = await scrape(client)
        assert before[ACTIVE] == 0
        slow = make_dispatch("simulate", quick_simulate(minSeconds=60, maxSeconds=60))
        await observer.publish(slow)
        await observer.wait_running(running, slow.job_id)
        started = before.get(STARTED, 0.0) + 1

        async def counted() -> bool:  # counted just after JobRunning was confirmed
            return (await scrape(client)).get(STARTED) == started

        await eventually(counted, what="the started attempt counted")
        assert (await scrape(client))[ACTIVE] == 1

        quick = make_dispatch("simulate", quick_simulate())
        await observer.publish(quick)
        await observer.wait_result(results, quick.job_id)
        await observer.cancel(slow.job_id, None, "enough")
        await observer.wait_result(results, slow.job_id)
        async with asyncio.timeout(10):
            await until(lambda: runtime.in_flight == 0)
        after = await scrape(client)
        assert after[ACTIVE] == 0
        assert after[STARTED] == before.get(STARTED, 0.0) + 2
        route = frozenset({("route", "/metrics"), ("method", "GET"), ("status", "200")})
        assert after[("http_requests_total", route)] >= 3
