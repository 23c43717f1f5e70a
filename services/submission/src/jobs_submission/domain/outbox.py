"""Outbox policy: how long a failed publish waits before the next try."""

from __future__ import annotations


def retry_delay_ms(attempts: int, *, base_seconds: float, max_seconds: float) -> int:
    """Exponential backoff after ``attempts`` failed publishes (1 -> base, 2 -> 2*base ...)."""
    exponent = max(0, min(attempts - 1, 30))
    return int(min(base_seconds * (2**exponent), max_seconds) * 1000)
