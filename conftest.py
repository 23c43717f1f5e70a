"""Root fixtures: PostgreSQL databases migrated once into a template, cloned per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from jobs_testing.plugin import PostgresServer


@pytest.fixture(scope="session")
async def jobs_template(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """A database migrated to the job store's head, used only as a template."""
    from jobs_scheduler.migrate import upgrade_async

    name = f"tpl_jobs_{uuid.uuid4().hex[:8]}"
    url = await postgres_server.create(name)
    await upgrade_async(url)
    yield name
    await postgres_server.drop(name)


@pytest.fixture
async def jobs_database_url(
    postgres_server: PostgresServer, jobs_template: str
) -> AsyncIterator[str]:
    """A fresh, migrated job store database of this test's own (plain postgresql:// URL)."""
    url = await postgres_server.clone(jobs_template)
    yield url
    await postgres_server.drop(url.rsplit("/", 1)[1])
