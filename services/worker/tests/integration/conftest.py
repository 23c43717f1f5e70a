"""Fixtures of the worker's integration tests: settings on a fresh vhost, running worker
runtimes (stopped afterwards) and an observer connection. The built-in handlers read their own
configuration from ``WORKER_*`` variables (``jobs_worker.handlers.config``): ``start_worker``
sets those its keyword arguments name, for the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from jobs_common.rabbit import RabbitBus
from jobs_sdk.context import Registry
from jobs_testing.worker_messages import Observer
from jobs_worker.app.handler_loading import Handlers
from jobs_worker.runtime import WorkerRuntime
from jobs_worker.settings import Settings


@pytest.fixture
def worker_settings(rabbit_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("WORKER_ARTIFACTS_DIR", str(artifacts_dir(tmp_path)))
    return Settings(
        amqp_url=rabbit_url,
        drain_timeout=10,
        requeue_pause=0.05,
        # Every attempt announced before it runs, so these tests see each JobRunning; the
        # deferred announcement has its own (test_worker_running_report.py).
        running_report_delay=0,
        startup_timeout=5,
        log_json=False,
        environment="test",
    )


def artifacts_dir(tmp_path: Path) -> Path:
    """Where this test's built-in handlers write their files (WORKER_ARTIFACTS_DIR)."""
    return tmp_path / "artifacts"


StartWorker = Callable[..., Awaitable[WorkerRuntime]]


@pytest.fixture
async def start_worker(
    worker_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[StartWorker]:
    runtimes: list[WorkerRuntime] = []

    async def start(*, registry: Registry | None = None, **overrides: Any) -> WorkerRuntime:
        """A started runtime with ``overrides`` on its settings (and its own handlers); an
        override that is no worker setting is a handler's, set as its WORKER_* variable."""
        for name in [name for name in overrides if name not in Settings.model_fields]:
            monkeypatch.setenv(f"WORKER_{name.upper()}", _env_text(overrides.pop(name)))
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


def _env_text(value: Any) -> str:
    if isinstance(value, list | tuple | dict):
        return orjson.dumps(value).decode()
    return str(value)
