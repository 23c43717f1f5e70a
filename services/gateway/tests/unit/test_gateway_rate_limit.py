"""The login token bucket, driven by a fake clock."""

from __future__ import annotations

import pytest

from jobs_gateway.domain.rate_limit import TokenBucketLimiter

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_refill() -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(capacity=3, period=60, clock=clock)
    assert [limiter.allow("k") for _ in range(4)] == [True, True, True, False]
    clock.now += 19.9  # 3 per minute: one token every 20 s
    assert not limiter.allow("k")
    clock.now += 0.2
    assert limiter.allow("k")
    assert not limiter.allow("k")


def test_keys_are_independent_and_capped() -> None:
    limiter = TokenBucketLimiter(capacity=1, period=60, max_keys=2, clock=Clock())
    assert limiter.allow("a")
    assert not limiter.allow("a")
    assert limiter.allow("b")
    assert limiter.allow("c")  # evicts "a", the least recently used
    assert len(limiter) == 2
    assert limiter.allow("a")
