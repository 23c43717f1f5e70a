"""Fixtures of the worker's integration tests: settings on a fresh vhost, running worker
runtimes (stopped afterwards) and an observer connection."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from jobs_common.rabbit import RabbitBus
from jobs_testing.worker_messages import Observer
from jobs_worker.app.handler_loading import Handlers
from jobs_worker.domain.context import Registry
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.settings import Settings


@pytest.fixture
def worker_settings(rabbit_url: str, tmp_path: Path) -> Settings:
    return Settings(
        amqp_url=rabbit_url,
        artifacts_dir=tmp_path / "artifacts",
        drain_timeout=10,
        requeue_pause=0.05,
        # Every attempt announced before it runs, so these tests see each JobRunning; the
        # deferred announcement has its own (test_worker_running_report.py).
        running_report_delay=0,
        startup_timeout=5,
        log_json=False,
        environment="test",
    )


StartWorker = Callable[..., Awaitable[WorkerRuntime]]


@pytest.fixture
async def start_worker(worker_settings: Settings) -> AsyncIterator[StartWorker]:
    runtimes: list[WorkerRuntime] = []

    async def start(*, registry: Registry | None = None, **overrides: Any) -> WorkerRuntime:
        """A started runtime with ``overrides`` on its settings (and its own handlers)."""
        settings = worker_settings.model_copy(update=overrides)
        handlers = None if registry is None else Handlers(registry=registry)
        runtime = WorkerRuntime(settings, handlers=handlers)
        await runtime.start()
        runtimes.append(runtime)
        return runtime

    yield start
    for runtime in runtimes:
        await runtime.stop()


@pytest.fixture
async def observer(rabbit_url: str) -> AsyncIterator[Observer]:
    bus = await RabbitBus.open(rabbit_url, name="test-observer")
    yield Observer(bus)
    await bus.close()
