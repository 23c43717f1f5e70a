"""Login and registration limits, counted exactly in PostgreSQL so they hold across replicas.

Each attempt is one upsert of its counters (login: the account and the client address, two
separate limits; registration: the client address) and is refused with 429 once a count
passes its limit in the current window. Low volume by nature, so one round trip per attempt
is the price of an exact count.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from jobs_common.errors import TooManyRequests
from jobs_gateway.adapters.rate_limits import Hit, RateLimitCounters
from jobs_gateway.domain.rate_limit import Limit, retry_after

log = logging.getLogger(__name__)

TOO_MANY_LOGINS = "too many login attempts, try again later"
TOO_MANY_REGISTRATIONS = "too many registrations from this address, try again later"


@dataclass(frozen=True)
class AttemptLimitsConfig:
    login_account: Limit
    login_address: Limit
    register_address: Limit


class AttemptLimits:
    def __init__(
        self,
        *,
        counters: RateLimitCounters,
        limits: AttemptLimitsConfig,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.counters = counters
        self.limits = limits
        self.clock = clock

    async def _count(self, keyed: list[tuple[Limit, str]], message: str) -> None:
        now = self.clock()
        hits = [
            Hit(limit.scope, key, limit.window.start(now), limit.window.end(now))
            for limit, key in keyed
        ]
        counts = await self.counters.hit(hits)
        wait = retry_after(
            [(limit, count) for (limit, _), count in zip(keyed, counts, strict=True)], now=now
        )
        if wait is not None:
            exceeded = [
                limit.scope.value
                for (limit, _), count in zip(keyed, counts, strict=True)
                if limit.exceeded(count)
            ]
            log.warning(
                "attempt limited",
                extra={"action": "attempt_limited", "limits": exceeded, "retry_after": wait},
            )
            raise TooManyRequests(message, retry_after=wait)

    async def login(self, *, email: str, address: str) -> None:
        """Count a login attempt (``email`` normalized); 429 when either limit is passed."""
        await self._count(
            [(self.limits.login_account, email), (self.limits.login_address, address)],
            TOO_MANY_LOGINS,
        )

    async def register(self, *, address: str) -> None:
        """Count a registration attempt; 429 when the address passed its limit."""
        await self._count([(self.limits.register_address, address)], TOO_MANY_REGISTRATIONS)
