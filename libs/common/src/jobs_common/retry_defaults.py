"""The platform's job defaults: what a job retries with, how often and for how long, when its
request, its type and its named policy say nothing.

One place for them: the scheduler starts its ``SCHEDULER_RETRY_*``, ``SCHEDULER_DEFAULT_*``
settings and its ``RetryPolicy`` from these, and the dashboard shows them
(``GET /api/retry-policies/defaults``) instead of a copy typed in by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from jobs_common.contracts import RetryStrategy

DEFAULT_MAX_ATTEMPTS: Final = 3
DEFAULT_TIMEOUT_SECONDS: Final = 300


@dataclass(frozen=True)
class RetryDefaults:
    strategy: RetryStrategy
    base_delay_ms: int
    multiplier: float
    max_delay_ms: int
    jitter: bool


DEFAULT_RETRY: Final = RetryDefaults(
    strategy="exponential", base_delay_ms=1_000, multiplier=2.0, max_delay_ms=60_000, jitter=True
)
