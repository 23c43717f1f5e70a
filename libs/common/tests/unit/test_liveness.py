"""Liveness (jobs_common.liveness): /health says when the service's own parts fail, and the
process gives up once one failed for the bound without a break."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from jobs_common.liveness import Watchdog
from jobs_common.ops_routes import add_ops_routes
from jobs_common.settings import ServiceSettings

pytestmark = pytest.mark.unit


class Parts:
    """The service's own parts, switched by the test; the clock is the test's too."""

    def __init__(self) -> None:
        self.state = {"broker": True, "consumers": True}
        self.now = 1000.0
        self.gave_up = 0

    async def check(self) -> dict[str, bool]:
        return dict(self.state)

    def watchdog(self, give_up_after: float = 60.0) -> Watchdog:
        def give_up() -> None:
            self.gave_up += 1

        return Watchdog(
            self.check,
            give_up_after=give_up_after,
            interval=5.0,
            on_give_up=give_up,
            clock=lambda: self.now,
        )


async def test_a_part_failing_within_the_bound_is_recovering_and_passing_again_is_ok() -> None:
    parts = Parts()
    watchdog = parts.watchdog()
    await watchdog.poll()
    assert watchdog.report() == (200, {"status": "ok"})
    parts.state["consumers"] = False
    await watchdog.poll()
    parts.now += 59
    await watchdog.poll()
    status, body = watchdog.report()
    assert (status, body["status"], body["failing"]) == (200, "recovering", ["consumers"])
    assert body["failingForSeconds"] == 59
    parts.state["consumers"] = True  # the robust connection brought it back
    await watchdog.poll()
    assert watchdog.report() == (200, {"status": "ok"})
    assert parts.gave_up == 0


async def test_a_part_failing_for_the_bound_gives_up_once_and_health_answers_503() -> None:
    parts = Parts()
    watchdog = parts.watchdog()
    parts.state["consumers"] = False
    await watchdog.poll()
    parts.now += 30
    parts.state["broker"] = False  # a second part failing later does not restart the count
    await watchdog.poll()
    parts.now += 30
    await watchdog.poll()
    assert parts.gave_up == 1
    status, body = watchdog.report()
    assert (status, body["status"], body["failing"]) == (503, "unhealthy", ["broker", "consumers"])
    parts.now += 5
    await watchdog.poll()
    assert parts.gave_up == 1  # asked to exit once


async def test_a_part_that_passes_in_between_starts_its_count_again() -> None:
    parts = Parts()
    watchdog = parts.watchdog()
    for _ in range(3):  # failing 50 s, passing once, failing 50 s: never 60 s without a break
        parts.state["broker"] = False
        await watchdog.poll()
        parts.now += 50
        await watchdog.poll()
        parts.state["broker"] = True
        await watchdog.poll()
    assert parts.gave_up == 0


async def test_a_check_that_raises_counts_as_failing() -> None:
    parts = Parts()

    async def broken() -> dict[str, bool]:
        raise RuntimeError("channel closed")

    watchdog = parts.watchdog(give_up_after=10)
    watchdog.check = broken
    await watchdog.poll()
    parts.now += 10
    await watchdog.poll()
    assert parts.gave_up == 1
    assert watchdog.report()[1]["failing"] == ["check"]


@pytest.fixture
async def app() -> AsyncIterator[FastAPI]:
    app = FastAPI()
    parts = Parts()
    parts.state["consumers"] = False

    async def ready() -> dict[str, bool]:
        return {"database": True}

    settings = ServiceSettings(liveness_give_up_seconds=1e-6, liveness_interval_seconds=3600)
    add_ops_routes(app, ready, live=parts.check, settings=settings)
    app.state.watchdog.on_give_up = lambda: None
    yield app


async def test_health_reports_the_watchdog_and_ready_stays_about_dependencies(
    app: FastAPI,
) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        assert (await client.get("/health")).json() == {"status": "ok"}
        await app.state.watchdog.poll()
        await app.state.watchdog.poll()
        health = await client.get("/health")
        assert health.status_code == 503
        assert health.json()["status"] == "unhealthy"
        assert health.json()["failing"] == ["consumers"]
        assert (await client.get("/ready")).status_code == 200
