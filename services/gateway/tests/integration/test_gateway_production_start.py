"""The real gateway process outside development: it refuses to start on a weak secret, naming
the variable; with secrets of its own it starts without demo logins, and the operator's
``python -m jobs_gateway.manage`` creates, promotes and deletes users."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from jobs_common.settings import DEV_JWT_SECRET
from jobs_gateway.migrate import upgrade_async
from jobs_testing.infra import free_port, wait_for_port
from jobs_testing.plugin import PostgresServer

pytestmark = pytest.mark.integration

TOKEN = "an-internal-token-of-our-own-0123456789"
SIGNING = "a-jwt-secret-of-our-own-0123456789abcdef"


@pytest.fixture
async def empty_database(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """Migrated, with no user at all (as a production database starts)."""
    name = f"gw_prod_{uuid.uuid4().hex[:8]}"
    url = await postgres_server.create(name)
    await upgrade_async(url)
    yield url
    await postgres_server.drop(name)


def production_env(database_url: str, port: int, **overrides: str) -> dict[str, str]:
    values = {
        "ENVIRONMENT": "production",
        "DATABASE_URL": database_url,
        "INTERNAL_TOKEN": TOKEN,
        "JWT_SECRET": SIGNING,
        "PORT": str(port),
        "AMQP_URL": "amqp://guest:guest@127.0.0.1:1/",  # the broker is not needed for /auth
        "LOG_LEVEL": "WARNING",
    } | overrides
    base = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    return base | {f"GATEWAY_{name}": value for name, value in values.items()}


def manage(
    env: dict[str, str], *arguments: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs_gateway.manage", *arguments],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def migrate(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobs_gateway.migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def production_gateway(empty_database: str, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    port = free_port()
    env = production_env(empty_database, port)
    log = (tmp_path / "gateway.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "jobs_gateway"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        wait_for_port("127.0.0.1", port, timeout=30)
        yield f"http://127.0.0.1:{port}", env
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()
        print((tmp_path / "gateway.log").read_text()[-4000:])


@pytest.mark.parametrize(
    ("override", "variable"),
    [
        ({"JWT_SECRET": DEV_JWT_SECRET}, "GATEWAY_JWT_SECRET"),
        ({"INTERNAL_TOKEN": "too-short"}, "GATEWAY_INTERNAL_TOKEN"),
        ({"JWT_SECRET": TOKEN}, "GATEWAY_JWT_SECRET"),
        ({"JWT_PREVIOUS_SECRET": TOKEN}, "GATEWAY_JWT_PREVIOUS_SECRET"),
        ({"SEED_DEMO_USERS": "true"}, "GATEWAY_SEED_DEMO_USERS"),
        ({"DATABASE_URL": "mysql://root@127.0.0.1/jobs"}, "GATEWAY_DATABASE_URL"),
    ],
)
def test_a_weak_setting_stops_the_gateway_naming_its_variable(
    empty_database: str, override: dict[str, str], variable: str
) -> None:
    env = production_env(empty_database, free_port(), **override)
    ended = subprocess.run(
        [sys.executable, "-m", "jobs_gateway"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ended.returncode != 0
    assert variable in ended.stderr
    assert "Traceback" not in ended.stderr
    for secret in override.values():
        if secret.startswith(("dev-", "an-")):
            assert secret not in ended.stderr


async def test_the_migration_one_shot_runs_outside_development_without_secrets(
    postgres_server: PostgresServer,
) -> None:
    """Compose's migrate-gateway is given the environment, the database and the log level
    only: outside development it migrates and seeds no demo login."""
    name = f"gw_mig_{uuid.uuid4().hex[:8]}"
    url = await postgres_server.create(name)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")} | {
            "GATEWAY_ENVIRONMENT": "production",
            "GATEWAY_DATABASE_URL": url,
            "GATEWAY_LOG_LEVEL": "WARNING",
        }
        ended = await asyncio.to_thread(migrate, env)
        assert ended.returncode == 0, ended.stderr
        connection = await asyncpg.connect(url)
        try:
            assert await connection.fetchval("SELECT count(*) FROM gateway.users") == 0
        finally:
            await connection.close()
        refused = await asyncio.to_thread(migrate, env | {"GATEWAY_SEED_DEMO_USERS": "true"})
        assert refused.returncode != 0 and "GATEWAY_SEED_DEMO_USERS" in refused.stderr
    finally:
        await postgres_server.drop(name)


async def test_production_has_no_demo_logins_and_the_operator_makes_users(
    production_gateway: tuple[str, dict[str, str]],
) -> None:
    url, env = production_gateway
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        demo = await client.post(
            "/auth/login", json={"email": "admin@test.com", "password": "admin123"}
        )
        assert demo.status_code == 401

        created = manage(
            env,
            "create-user",
            "--email",
            "Ops@Example.com",
            "--role",
            "admin",
            "--password-stdin",
            stdin="a-long-operator-password\n",
        )
        assert created.returncode == 0, created.stderr
        assert "password:" not in created.stdout  # given on stdin, never printed
        login = await client.post(
            "/auth/login",
            json={"email": "ops@example.com", "password": "a-long-operator-password"},
        )
        assert login.status_code == 200
        assert login.json()["user"]["role"] == "admin"

        again = manage(
            env,
            "create-user",
            "--email",
            "ops@example.com",
            "--password-stdin",
            stdin="another-long-password\n",
        )
        assert again.returncode == 4 and "already exists" in again.stderr

        generated = manage(env, "create-user", "--email", "dev@example.com")
        assert generated.returncode == 0
        password = generated.stdout.split("password: ", 1)[1].strip()
        assert len(password) >= 16
        user = await client.post(
            "/auth/login", json={"email": "dev@example.com", "password": password}
        )
        assert user.json()["user"]["role"] == "user"

        assert (
            manage(env, "set-role", "--email", "dev@example.com", "--role", "admin").returncode == 0
        )
        promoted = await client.post(
            "/auth/login", json={"email": "dev@example.com", "password": password}
        )
        assert promoted.json()["user"]["role"] == "admin"

        assert manage(env, "delete-user", "--email", "dev@example.com").returncode == 0
        gone = await client.post(
            "/auth/login", json={"email": "dev@example.com", "password": password}
        )
        assert gone.status_code == 401
        assert manage(env, "delete-user", "--email", "dev@example.com").returncode == 3
        assert manage(env, "set-role", "--email", "not-an-email", "--role", "user").returncode == 2
