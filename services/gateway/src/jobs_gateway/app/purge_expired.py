"""Purging rows that no longer decide anything: refresh tokens past their ``exp`` and rate-limit
counters of ended windows. Bounded batches, so a backlog never holds long locks; every replica
may run it (deleting the same rows twice is harmless)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from jobs_gateway.adapters.rate_limits import RateLimitCounters
from jobs_gateway.adapters.refresh_tokens import RefreshTokens

log = logging.getLogger(__name__)

BATCH = 1_000
MAX_BATCHES = 10  # per round: at most 10,000 rows of each table
# Counters are kept a little past their window, for replicas whose clocks run late.
COUNTER_GRACE = timedelta(minutes=1)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Housekeeping:
    def __init__(
        self,
        *,
        refresh_tokens: RefreshTokens,
        counters: RateLimitCounters,
        clock: Callable[[], datetime] = _utc_now,
        batch: int = BATCH,
    ) -> None:
        self.refresh_tokens = refresh_tokens
        self.counters = counters
        self.clock = clock
        self.batch = batch

    async def purge(self) -> tuple[int, int]:
        """One round: (refresh tokens, counters) deleted."""
        now = self.clock()
        tokens = counters = 0
        for _ in range(MAX_BATCHES):
            deleted = await self.refresh_tokens.purge_expired(now=now, limit=self.batch)
            tokens += deleted
            if deleted < self.batch:
                break
        for _ in range(MAX_BATCHES):
            deleted = await self.counters.purge(ended_before=now - COUNTER_GRACE, limit=self.batch)
            counters += deleted
            if deleted < self.batch:
                break
        if tokens or counters:
            log.info(
                "purged",
                extra={
                    "action": "purge",
                    "refresh_tokens": tokens,
                    "rate_limit_counters": counters,
                },
            )
        return tokens, counters
