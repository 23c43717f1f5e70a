"""The compose stack of `make test-compose`: built, started through its health checks, and
taken down with `down -v` at the end (tests/compose/stack.py)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from jobs_testing.gateway_session import signed_in
from jobs_testing.infra import free_port

from .stack import LEFT_OUT, ROOT, ComposeStack, StartLog


@pytest.fixture(scope="session")
def compose_stack() -> Iterator[ComposeStack]:
    ports = {
        name: free_port()
        for name in ("HTTP_PORT", "RABBITMQ_CONSOLE_PORT", "PROMETHEUS_PORT", "MAIL_UI_PORT")
    }
    stack = ComposeStack(ROOT / "var" / "compose", ports)
    for service, reason in LEFT_OUT.items():
        print(f"compose: {service} left out: {reason}")
    stack.resolve()
    stack.down()  # an earlier run that was interrupted
    timings = stack.build()
    for image, took in timings.items():
        print(f"compose: built {image} in {took:.1f} s")
    try:
        yield stack
    finally:
        stack.save_logs(stack.workdir / "logs")  # nothing left if the last test took it down
        stack.down()


@pytest.fixture(scope="session")
def start_log(compose_stack: ComposeStack) -> StartLog:
    began = time.monotonic()
    log = compose_stack.up()
    print(f"compose: created and started in {time.monotonic() - began:.0f} s")
    for service in compose_stack.start_order():
        started = log.started[service]
        ready = log.healthy.get(service) or log.completed.get(service)
        took = f"{ready - started:.1f} s" if ready else "-"
        print(f"compose: {service} started -> healthy (one-shots: exited 0) in {took}")
    time.sleep(5)  # settled, nothing submitted yet
    compose_stack.idle_memory = compose_stack.memory()
    return log


@pytest.fixture(scope="session")
def gateway_url(compose_stack: ComposeStack, start_log: StartLog) -> str:
    return f"http://127.0.0.1:{compose_stack.ports['HTTP_PORT']}"


@pytest.fixture
async def admin(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in(gateway_url, "admin@test.com", "admin123") as client:
        yield client
