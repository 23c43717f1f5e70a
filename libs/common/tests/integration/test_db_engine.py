"""The engine's pool never hands out a connection the server has closed (no pre-ping)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.db import create_engine
from jobs_testing.plugin import PostgresServer

pytestmark = pytest.mark.integration


@pytest.fixture
async def engine(postgres_server: PostgresServer) -> AsyncIterator[AsyncEngine]:
    url = await postgres_server.create("engine_pool_test")
    engine = create_engine(url, pool_size=2)
    yield engine
    await engine.dispose()
    await postgres_server.drop("engine_pool_test")


async def backend_pids(engine: AsyncEngine) -> set[int]:
    async with engine.connect() as connection:
        return {int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())}


async def test_a_connection_the_server_closed_is_replaced_at_checkout(
    engine: AsyncEngine, postgres_server: PostgresServer
) -> None:
    before = await backend_pids(engine)
    admin = await asyncpg.connect(postgres_server.url_for("postgres"))
    try:
        for pid in before:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()
    await asyncio.sleep(0.2)  # asyncpg reads the server's goodbye while the connection idles
    # What the services do: a transaction right after the server dropped the pooled one.
    async with engine.begin() as connection:
        assert (await connection.execute(text("SELECT 1"))).scalar_one() == 1
    assert await backend_pids(engine) - before
