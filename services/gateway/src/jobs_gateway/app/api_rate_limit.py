"""The per-user limit on ``/api/*``: decided in memory on the hot path, shared through
PostgreSQL in the background.

Each replica counts its own requests per user per minute (domain/rate_limit.py
:class:`ReplicaWindowCounts`) and, every ``flush_interval`` seconds, adds them to the shared
counters in one batched upsert, reading back every flushed user's count over all replicas. A
request never waits on PostgreSQL. A user whose count reaches the limit is refused (429 with
``Retry-After``) until the minute ends. Tolerance: another replica's requests are seen one
flush later, so with N replicas a user may pass the limit by what the other N-1 replicas
admit within one flush interval. If PostgreSQL is unreachable the hits stay pending (logged)
and each replica goes on limiting with what it knows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from jobs_common.errors import TooManyRequests
from jobs_gateway.adapters.rate_limits import RateLimitCounters
from jobs_gateway.domain.rate_limit import ReplicaWindowCounts, Scope, Window

log = logging.getLogger(__name__)

API_WINDOW = Window(60)
TOO_MANY_REQUESTS = "too many requests, slow down"


class ApiRateLimit:
    def __init__(
        self,
        *,
        counters: RateLimitCounters,
        per_minute: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``per_minute`` 0 turns the limit off (nothing is counted or flushed)."""
        self.counters = counters
        self.clock = clock
        self.counts = (
            ReplicaWindowCounts(max_hits=per_minute, window=API_WINDOW) if per_minute else None
        )
        self._flushing = asyncio.Lock()

    @property
    def enabled(self) -> bool:
        return self.counts is not None

    def check(self, user_id: str) -> None:
        """Count one request of ``user_id``; 429 when the user is over the limit."""
        if self.counts is None:
            return
        wait = self.counts.hit(user_id, now=self.clock())
        if wait is not None:
            raise TooManyRequests(TOO_MANY_REQUESTS, retry_after=wait)

    async def flush(self) -> int:
        """Add the pending hits to the shared counts and learn those back; how many users
        were flushed. On failure the hits stay pending and the error propagates."""
        if self.counts is None:
            return 0
        async with self._flushing:
            deltas = self.counts.drain(now=self.clock())
            if deltas is None:
                return 0
            try:
                shared = await self.counters.add(Scope.API_USER, deltas)
            except BaseException:
                self.counts.restore(deltas)
                raise
            self.counts.learn(deltas.window_start, shared)
            return len(shared)
