"""When a failed request is sent again, and after how long: pure functions of the outcome.

A request is sent again only when that cannot do twice what should be done once:

* never sent (refused connection, connect timeout, no free connection in the pool), or refused
  before any work (``429`` with ``Retry-After``): every request;
* maybe processed (the connection was cut before the answer, a read timeout, ``502``,
  ``503``, ``504``): only *replay-safe* requests: reads, submissions (they carry the same
  ``Idempotency-Key`` every time, so the server answers a repeat with the first job) and
  pause/resume (idempotent). A cancel, retry, requeue, discard, schedule creation or deletion,
  or a token refresh (single-use) is not sent again then: its failure says it may have
  happened (:attr:`~jobs_client.errors.TransportFailure.maybe_processed`).

A ``429`` without ``Retry-After`` (the schedule caps: waiting frees nothing), or with one
longer than ``max_retry_after``, is raised at once as :class:`~jobs_client.errors.RateLimited`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx

from jobs_client.errors import retry_after_seconds

# Failures where the request never reached the server.
NOT_SENT: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)
# Failures that say the request is wrong, not the network: never retried.
NOT_TRANSIENT: tuple[type[httpx.TransportError], ...] = (
    httpx.UnsupportedProtocol,
    httpx.LocalProtocolError,
    httpx.ProxyError,
)
TRANSIENT_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class Retries:
    """The retry budget of one call.

    ``attempts`` counts every send (1: no retry). The n-th retry waits
    ``min(max_backoff, backoff * 2 ** (n - 1))``, drawn uniformly from ``[0, that]`` when
    ``jitter`` ("full jitter": many clients failing together do not come back together), and
    never less than the server's ``Retry-After``."""

    attempts: int = 5
    backoff: float = 0.25
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.backoff < 0 or self.max_backoff < 0 or self.max_retry_after < 0:
            raise ValueError("delays must not be negative")

    def delay(self, retry: int, rng: random.Random) -> float:
        """The pause before retry number ``retry`` (1 for the first)."""
        ceiling = min(self.max_backoff, self.backoff * 2 ** (retry - 1))
        return rng.uniform(0, ceiling) if self.jitter else ceiling

    def after_failure(
        self, error: httpx.TransportError, *, attempt: int, replay_safe: bool, rng: random.Random
    ) -> float | None:
        """The pause before sending again after ``error`` on send number ``attempt``, or None
        to give up."""
        if attempt >= self.attempts or isinstance(error, NOT_TRANSIENT):
            return None
        if not replay_safe and not isinstance(error, NOT_SENT):
            return None
        return self.delay(attempt, rng)

    def after_answer(
        self,
        status: int,
        headers: httpx.Headers,
        *,
        attempt: int,
        replay_safe: bool,
        rng: random.Random,
    ) -> float | None:
        """The pause before sending again after an error answer, or None to raise it."""
        if attempt >= self.attempts:
            return None
        retry_after = retry_after_seconds(headers)
        if status == 429:
            if retry_after is None or retry_after > self.max_retry_after:
                return None
            return retry_after
        if status in TRANSIENT_STATUSES and replay_safe:
            backoff = self.delay(attempt, rng)
            if retry_after is None:
                return backoff
            if retry_after > self.max_retry_after:
                return None
            return max(backoff, retry_after)
        return None


def sent(error: httpx.TransportError) -> bool:
    """Whether the request may have reached the server before ``error``."""
    return not isinstance(error, NOT_SENT)
