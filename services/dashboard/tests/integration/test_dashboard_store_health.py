"""GET /api/store/health against the real PostgreSQL: what its catalog says about autovacuum
and each job store table's dead rows, judged as the console's store health card shows it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, insert, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import metadata, poison_messages
from jobs_dashboard.settings import Settings

pytestmark = pytest.mark.integration

DEAD_ROWS_WARNING = 50  # low, so a test can leave more dead rows than that


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"store_dead_rows_warning": DEAD_ROWS_WARNING})


async def server_autovacuum(engine: AsyncEngine) -> bool:
    async with engine.connect() as connection:
        return bool(
            await connection.scalar(
                text(
                    "SELECT current_setting('autovacuum') = 'on'"
                    " AND current_setting('track_counts') = 'on'"
                )
            )
        )


async def test_the_verdict_says_whether_autovacuum_looks_after_the_store(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    on = await server_autovacuum(store_engine)
    if on:  # a table switched off is warned about by name (servers with autovacuum on)
        async with store_engine.begin() as connection:
            await connection.execute(text("ALTER TABLE workers SET (autovacuum_enabled = off)"))

    answer = await client.get("/api/store/health", headers=auth.admin)

    assert answer.status_code == 200, answer.text
    health = answer.json()
    assert health["verdict"] == "warning"
    assert health["autovacuum"] is on
    assert health["threshold"] == {"deadRows": DEAD_ROWS_WARNING, "deadRatio": 0.2}
    assert {t["table"] for t in health["tables"]} == set(metadata.tables)
    jobs = next(t for t in health["tables"] if t["table"] == "jobs")
    assert set(jobs) == {
        "table",
        "liveRows",
        "deadRows",
        "autovacuum",
        "lastVacuumAt",
        "lastAnalyzeAt",
        "overThreshold",
    }
    [warning] = [w for w in health["warnings"] if w["code"] != "dead_rows"]
    if on:
        assert warning["code"] == "autovacuum_off_for_table"
        assert warning["tables"] == ["workers"]
        assert "workers" in warning["message"]
    else:  # this machine's PostgreSQL: autovacuum off for the whole server
        assert warning["code"] == "autovacuum_off"
        assert "autovacuum is off" in warning["message"]
        assert not any(t["autovacuum"] for t in health["tables"])


async def test_a_table_s_dead_rows_show_and_past_the_threshold_warn(
    client: httpx.AsyncClient, auth: Any, store_engine: AsyncEngine
) -> None:
    left = DEAD_ROWS_WARNING + 10
    async with store_engine.begin() as connection:
        await connection.execute(
            insert(poison_messages),
            [{"queue": "jobs.submitted", "reason": "test", "body": b"x"} for _ in range(left)],
        )
    async with store_engine.begin() as connection:
        await connection.execute(delete(poison_messages))
        # published as this transaction ends, not up to a second later (PostgreSQL 15+)
        await connection.execute(text("SELECT pg_stat_force_next_flush()"))

    async with asyncio.timeout(10):
        while True:
            health = (await client.get("/api/store/health", headers=auth.admin)).json()
            poison = next(t for t in health["tables"] if t["table"] == "poison_messages")
            if poison["deadRows"] >= left:
                break
            await asyncio.sleep(0.1)

    assert poison["liveRows"] == 0
    assert poison["overThreshold"] is True
    assert health["tables"][0]["deadRows"] >= left  # most dead rows first
    [warning] = [w for w in health["warnings"] if w["code"] == "dead_rows"]
    assert "poison_messages" in warning["tables"]
    assert "poison_messages (" in warning["message"]
    assert "workers" not in warning["tables"]


async def test_only_admins_see_the_store_s_health(client: httpx.AsyncClient, auth: Any) -> None:
    answer = await client.get("/api/store/health", headers=auth.user)
    assert answer.status_code == 403
    assert answer.json()["error"] == "forbidden"
