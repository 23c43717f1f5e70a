"""The whole platform as real processes on a fresh database, vhost and Mongo database."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jobs_testing.gateway_session import signed_in
from jobs_testing.infra import free_port
from jobs_testing.plugin import (
    PostgresServer,
    RabbitServer,
    SmtpSink,
    running_smtp_sink,
)
from jobs_testing.stack import Stack, StackConfig

ROOT = Path(__file__).resolve().parents[2]
UI_BUILD = ROOT / "frontend" / "dist"  # `make ui` (and `make test`) build it first


@pytest.fixture(scope="session")
async def e2e_smtp() -> AsyncIterator[SmtpSink]:
    with running_smtp_sink() as sink:
        yield sink


def isolated_config(
    *, database_url: str, amqp_url: str, mongo_url: str, base: Path, **overrides: Any
) -> StackConfig:
    """A stack of two workers on free ports, a Mongo database and artifacts of its own, in
    development (the demo logins the tests use are seeded only there; its secrets are still
    fresh ones, StackConfig's), so it can run beside any other."""
    settings: dict[str, Any] = {
        "mongo_db": f"e2e_{uuid.uuid4().hex[:8]}",
        "artifacts_dir": str(base / "artifacts"),
        "gateway_port": free_port(),
        "submission_port": free_port(),
        "scheduler_port": free_port(),
        "dashboard_port": free_port(),
        "worker_ports": (free_port(), free_port()),
        "workers": 2,
        "environment": "development",
    }
    return StackConfig(
        database_url=database_url,
        amqp_url=amqp_url,
        mongo_url=mongo_url,
        **(settings | overrides),
    )


@contextlib.asynccontextmanager
async def running_stack(
    postgres_server: PostgresServer,
    rabbit_server: RabbitServer,
    mongo_url: str,
    base: Path,
    **overrides: Any,
) -> AsyncIterator[Stack]:
    """A stack of its own (database, vhost, ports; ``isolated_config`` with ``overrides``),
    started, ready, and stopped and cleaned up afterwards."""
    database = f"e2e_{uuid.uuid4().hex[:12]}"
    database_url = await postgres_server.create(database)
    vhost = await rabbit_server.create_vhost()
    config = isolated_config(
        database_url=database_url,
        amqp_url=rabbit_server.url_for(vhost),
        mongo_url=mongo_url,
        base=base,
        **overrides,
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
async def stack(
    postgres_server: PostgresServer,
    rabbit_server: RabbitServer,
    mongo_url: str,
    e2e_smtp: SmtpSink,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    async with running_stack(
        postgres_server,
        rabbit_server,
        mongo_url,
        tmp_path_factory.mktemp("stack"),
        smtp_host=e2e_smtp.host,
        smtp_port=e2e_smtp.port,
        ui_dir=str(UI_BUILD),
        extra_env={
            # Fast retries so the retry paths finish within the test's patience.
            "SCHEDULER_RETRY_BASE_DELAY_MS": "200",
            "SCHEDULER_RETRY_MAX_DELAY_MS": "1000",
            "SCHEDULER_TIMEOUT_GRACE_SECONDS": "2",
            # Short leases so a silent worker's job moves on within the test's patience.
            "SCHEDULER_LEASE_SECONDS": "3",
            # Heartbeats well below that lease (docs/worker.md): at the default 2 s, one heartbeat
            # a second late on a loaded machine let a live worker's leases run out.
            "WORKER_HEARTBEAT_INTERVAL": "0.75",
            # The tests poll as fast as they like and log in and register from one address
            # (the public API fuzzer too): no per-user request limit, generous attempt limits
            # (the integration tests exercise the real ones).
            "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
            "GATEWAY_LOGIN_ATTEMPTS_PER_ACCOUNT_PER_MINUTE": "1000",
            "GATEWAY_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": "10000",
            "GATEWAY_REGISTRATIONS_PER_ADDRESS_PER_HOUR": "10000",
        },
    ) as running:
        yield running


@pytest.fixture(scope="session")
def gateway_url(stack: Stack) -> str:
    return stack.services["gateway"].url


@pytest.fixture(scope="session")
async def admin(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in(gateway_url, "admin@test.com", "admin123") as client:
        yield client


@pytest.fixture(scope="session")
async def user(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in(gateway_url, "user@test.com", "user123") as client:
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


# --- the browser (tests/e2e/test_ui_e2e.py) ---------------------------------------------------

CHROMIUM = "/usr/bin/chromium"  # Debian's package (scripts/ensure-infra.sh); never downloaded
AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = ROOT / "var" / "artifacts" / "ui"


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    if not (UI_BUILD / "index.html").is_file():
        pytest.fail("the web UI is not built: run `make ui` (make test builds it)")
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield chromium
        finally:
            await chromium.close()


class PageErrors:
    """Console errors and uncaught exceptions of one page: a test fails on any it did not
    :meth:`allow` (the browser itself logs a refused request, e.g. an expected 422). Refused
    requests are kept with their URL to say which one it was."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.allowed: list[str] = []
        self.refused: list[str] = []

    def allow(self, fragment: str) -> None:
        self.allowed.append(fragment)

    def console(self, message: Any) -> None:
        if message.type == "error":
            self.seen.append(f"console: {message.text}")

    def uncaught(self, error: Any) -> None:
        self.seen.append(f"uncaught: {error}")

    def response(self, response: Any) -> None:
        if response.status >= 400:
            self.refused.append(f"{response.status} {response.request.method} {response.url}")

    def unexpected(self) -> list[str]:
        return [e for e in self.seen if not any(a in e for a in self.allowed)]


@pytest.fixture
def page_errors() -> PageErrors:
    return PageErrors()


@pytest.fixture
async def page(browser: Any, gateway_url: str, page_errors: PageErrors) -> AsyncIterator[Any]:
    context = await browser.new_context(
        base_url=gateway_url, viewport={"width": 1280, "height": 800}
    )
    tab = await context.new_page()
    tab.on("console", page_errors.console)
    tab.on("pageerror", page_errors.uncaught)
    tab.on("response", page_errors.response)
    tab.set_default_timeout(15_000)
    try:
        yield tab
    finally:
        await context.close()
    assert page_errors.unexpected() == [], (page_errors.seen, page_errors.refused)


async def axe_violations(
    page: Any, *, impacts: tuple[str, ...] = ("serious", "critical")
) -> list[str]:
    """axe-core's violations of at least ``impacts`` on the page as it is now (axe loaded
    once per document)."""
    if not await page.evaluate("typeof axe !== 'undefined'"):
        await page.add_script_tag(path=str(AXE))
    result = await page.evaluate(
        "async () => await axe.run(document, {resultTypes: ['violations']})"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in impacts
    ]


async def screenshot(page: Any, name: str) -> Path:
    """Save the whole page as a test artifact (var/artifacts/ui/<name>.png)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path
