"""Retry delays: a pure function of the policy, the attempt number and a random source."""

from __future__ import annotations

import random
from dataclasses import dataclass

from jobs_common.contracts import RetryStrategy
from jobs_common.retry_defaults import DEFAULT_RETRY


@dataclass(frozen=True)
class RetryPolicy:
    strategy: RetryStrategy = DEFAULT_RETRY.strategy
    base_delay_ms: int = DEFAULT_RETRY.base_delay_ms
    multiplier: float = DEFAULT_RETRY.multiplier
    max_delay_ms: int = DEFAULT_RETRY.max_delay_ms
    jitter: bool = DEFAULT_RETRY.jitter


def retry_delay_ms(policy: RetryPolicy, attempt: int, rng: random.Random | None = None) -> int:
    """Delay before the attempt after ``attempt`` (1-based) failed.

    fixed: base; linear: base * attempt; exponential: base * multiplier ** (attempt - 1);
    capped at max_delay_ms, then multiplied by a uniform 0.5..1.5 jitter when enabled (the cap
    bounds the un-jittered delay, so jitter still spreads capped retries).
    """
    if attempt < 1:
        raise ValueError("attempt is 1-based")
    if policy.strategy == "fixed":
        delay = float(policy.base_delay_ms)
    elif policy.strategy == "linear":
        delay = float(policy.base_delay_ms * attempt)
    else:
        delay = policy.base_delay_ms * policy.multiplier ** (attempt - 1)
    delay = min(delay, float(policy.max_delay_ms))
    if policy.jitter:
        delay *= (rng or random).uniform(0.5, 1.5)
    return max(0, round(delay))
