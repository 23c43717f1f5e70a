"""The purge of rows that decide nothing any more: expired refresh tokens and counters of
ended windows go, everything else stays; the app runs it in the background."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import TokenKeys
from jobs_common.db import create_engine
from jobs_gateway.adapters.rate_limits import Hit, RateLimitCounters
from jobs_gateway.adapters.refresh_tokens import RefreshTokens
from jobs_gateway.app.purge_expired import Housekeeping
from jobs_gateway.domain.rate_limit import Scope
from jobs_gateway.domain.tokens import TokenIssuer
from jobs_testing.waiting import eventually

from ..conftest import TEST_KEYS, GatewayFactory

pytestmark = pytest.mark.integration

NOW = datetime(2030, 6, 1, 12, 0, 30, tzinfo=UTC)


@pytest.fixture
async def engine(gateway_database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(gateway_database_url, pool_size=2)
    yield engine
    await engine.dispose()


async def user_id(url: str, email: str = "user@test.com") -> uuid.UUID:
    connection = await asyncpg.connect(url)
    try:
        found: uuid.UUID = await connection.fetchval(
            "SELECT id FROM gateway.users WHERE email = $1", email
        )
    finally:
        await connection.close()
    return found


async def fetch_ids(url: str, sql: str) -> set[str]:
    connection = await asyncpg.connect(url)
    try:
        return {str(r[0]) for r in await connection.fetch(sql)}
    finally:
        await connection.close()


def issuer(keys: TokenKeys = TEST_KEYS) -> TokenIssuer:
    return TokenIssuer(keys=keys, access_ttl=timedelta(minutes=15), refresh_ttl=timedelta(days=1))


async def test_purge_deletes_only_expired_tokens_and_ended_windows(
    engine: AsyncEngine, gateway_database_url: str
) -> None:
    owner = await user_id(gateway_database_url)
    tokens, counters = RefreshTokens(engine), RateLimitCounters(engine)
    expired = [issuer().refresh(owner, now=NOW - timedelta(days=2)) for _ in range(5)]
    live = issuer().refresh(owner, now=NOW - timedelta(hours=1))
    for token in [*expired, live]:
        await tokens.start_family(token, now=NOW)
    minute = int(NOW.timestamp()) // 60 * 60
    await counters.hit(
        [
            Hit(Scope.LOGIN_ACCOUNT, "old", minute - 180, minute - 120),  # ended 2 min ago
            Hit(Scope.LOGIN_ACCOUNT, "just-ended", minute - 60, minute),  # within the grace
            Hit(Scope.API_USER, "current", minute, minute + 60),
        ]
    )
    housekeeping = Housekeeping(
        refresh_tokens=tokens, counters=counters, clock=lambda: NOW, batch=2
    )
    assert await housekeeping.purge() == (5, 1)  # several bounded batches
    assert await fetch_ids(gateway_database_url, "SELECT id FROM gateway.refresh_tokens") == {
        str(live.token_id)
    }
    assert await fetch_ids(gateway_database_url, "SELECT key FROM gateway.rate_limit_counters") == {
        "just-ended",
        "current",
    }
    assert await housekeeping.purge() == (0, 0)


async def test_the_app_purges_in_the_background(
    gateway_factory: GatewayFactory, engine: AsyncEngine, gateway_database_url: str
) -> None:
    owner = await user_id(gateway_database_url)
    stale = issuer().refresh(owner, now=datetime.now(UTC) - timedelta(days=2))
    await RefreshTokens(engine).start_family(stale, now=datetime.now(UTC))
    async with gateway_factory(purge_interval_seconds=0.05):

        async def purged() -> bool:
            ids = await fetch_ids(gateway_database_url, "SELECT id FROM gateway.refresh_tokens")
            return str(stale.token_id) not in ids

        await eventually(purged, timeout=10, what="the expired token purged")
