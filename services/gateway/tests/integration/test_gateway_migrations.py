"""Gateway migrations: match the models, re-runnable, schema gateway only, CLI seeds users."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from jobs_common.db import async_url
from jobs_gateway.adapters.tables import include_name, metadata
from jobs_gateway.migrate import upgrade_async
from jobs_testing.plugin import PostgresServer

pytestmark = pytest.mark.integration


async def fetch(url: str, sql: str) -> list[Any]:
    connection = await asyncpg.connect(url)
    try:
        return list(await connection.fetch(sql))
    finally:
        await connection.close()


@pytest.fixture
async def empty_database(postgres_server: PostgresServer) -> AsyncIterator[str]:
    name = f"t_empty_{uuid.uuid4().hex[:12]}"
    url = await postgres_server.create(name)
    yield url
    await postgres_server.drop(name)


async def diff_against_models(url: str) -> list[Any]:
    engine = create_async_engine(async_url(url))
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(
                        sync,
                        opts={
                            "compare_type": True,
                            "include_schemas": True,
                            "include_name": include_name,
                        },
                    ),
                    metadata,
                )
            )
    finally:
        await engine.dispose()


async def test_head_matches_the_models(gateway_database_url: str) -> None:
    assert await diff_against_models(gateway_database_url) == []


async def test_migrations_are_rerunnable_and_keep_users(gateway_database_url: str) -> None:
    await upgrade_async(gateway_database_url)
    await upgrade_async(gateway_database_url)
    versions = await fetch(
        gateway_database_url, "SELECT version_num FROM gateway.alembic_version_gateway"
    )
    assert [r["version_num"] for r in versions] == ["0005"]
    users = await fetch(gateway_database_url, "SELECT email FROM gateway.users ORDER BY email")
    assert [r["email"] for r in users] == ["admin@test.com", "user@test.com"]


async def test_coexists_with_the_job_store_without_touching_it(jobs_database_url: str) -> None:
    before = await fetch(
        jobs_database_url,
        "SELECT table_schema, table_name FROM information_schema.tables "
        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
    )
    await upgrade_async(jobs_database_url)
    after = await fetch(
        jobs_database_url,
        "SELECT table_schema, table_name FROM information_schema.tables "
        "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
    )
    added = {tuple(r) for r in after} - {tuple(r) for r in before}
    assert added == {
        ("gateway", "users"),
        ("gateway", "refresh_tokens"),
        ("gateway", "rate_limit_counters"),
        ("gateway", "organizations"),
        ("gateway", "memberships"),
        ("gateway", "audit_events"),
        ("gateway", "projects"),
        ("gateway", "api_keys"),
        ("gateway", "alembic_version_gateway"),
    }
    assert {tuple(r) for r in before} <= {tuple(r) for r in after}
    assert await diff_against_models(jobs_database_url) == []


async def test_migrate_command_creates_schema_demo_users_and_team_idempotently(
    empty_database: str,
) -> None:
    for _ in range(2):
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "jobs_gateway.migrate",
            empty_database,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await process.communicate()
        assert process.returncode == 0, stderr.decode()
    rows = await fetch(empty_database, "SELECT email, role FROM gateway.users ORDER BY email")
    assert [(r["email"], r["role"]) for r in rows] == [
        ("admin@example.com", "user"),  # the demo team (docs/tenancy.md, "Demo data")
        ("admin@test.com", "admin"),
        ("dev@example.com", "user"),
        ("user@test.com", "user"),
        ("viewer@example.com", "user"),
    ]
    orgs = await fetch(
        empty_database, "SELECT slug FROM gateway.organizations WHERE NOT personal ORDER BY slug"
    )
    assert [r["slug"] for r in orgs] == ["acme-corp", "startup-inc"]
    hashes = await fetch(empty_database, "SELECT password_hash FROM gateway.users")
    assert all(r["password_hash"].startswith("$argon2id$") for r in hashes)


async def test_existing_users_get_their_personal_organization_and_it_migrates_down(
    empty_database: str,
) -> None:
    """0003 on a store with users: each becomes the owner of a personal organization whose
    default project has the id the job store's migration derives from the email; users and
    sessions are kept both ways."""
    from jobs_common.migrations import downgrade
    from jobs_common.tenancy import personal_organization_id, personal_project_id
    from jobs_gateway.domain.tenancy import personal_slug
    from jobs_gateway.migrate import MIGRATIONS, upgrade

    await asyncio.to_thread(upgrade, empty_database, "0002")
    emails = ["alice@example.com", "bob.o'neil+jobs@example.com", "x@example.com"]
    connection = await asyncpg.connect(empty_database)
    try:
        for email in emails:
            await connection.execute(
                "INSERT INTO gateway.users (id, email, password_hash, role) "
                "VALUES ($1, $2, 'hash', 'user')",
                uuid.uuid4(),
                email,
            )
    finally:
        await connection.close()

    await asyncio.to_thread(upgrade, empty_database)

    rows = await fetch(
        empty_database,
        "SELECT u.email, o.id AS org, o.slug, o.personal, m.role, p.id AS project, p.slug AS "
        "project_slug, p.personal_default FROM gateway.users u "
        "JOIN gateway.memberships m ON m.user_id = u.id "
        "JOIN gateway.organizations o ON o.id = m.organization_id "
        "JOIN gateway.projects p ON p.organization_id = o.id ORDER BY u.email",
    )
    assert [tuple(r) for r in rows] == [
        (
            email,
            personal_organization_id(email),
            personal_slug(email),
            True,
            "owner",
            personal_project_id(email),
            "default",
            True,
        )
        for email in sorted(emails)
    ]
    assert await diff_against_models(empty_database) == []

    await asyncio.to_thread(downgrade, MIGRATIONS, empty_database, "0002")
    tables = await fetch(
        empty_database,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'gateway' "
        "ORDER BY table_name",
    )
    assert "organizations" not in {r["table_name"] for r in tables}
    assert len(await fetch(empty_database, "SELECT email FROM gateway.users")) == 3
