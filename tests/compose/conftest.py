"""The compose stack of `make test-compose`: built, started through its health checks, and
taken down with `down -v` at the end (tests/compose/stack.py)."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from .stack import LEFT_OUT, ROOT, ComposeStack, StartLog


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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


async def login(gateway_url: str, email: str, password: str) -> str:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as client:
        response = await client.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    token: str = response.json()["token"]
    return token


@pytest.fixture
async def admin(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    token = await login(gateway_url, "admin@test.com", "admin123")
    async with httpx.AsyncClient(
        base_url=gateway_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        yield client
