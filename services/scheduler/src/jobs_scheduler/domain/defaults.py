"""The configured defaults a job falls back on (built from the settings in ``service.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobs_scheduler.domain.retry import RetryPolicy


@dataclass(frozen=True)
class JobDefaults:
    max_attempts: int
    timeout_seconds: int
    max_timeout_seconds: int
    timeout_grace_seconds: int
    retry_policy: RetryPolicy
    ttl_redispatch_limit: int
    lease_seconds: int = 10
    poison_threshold: int = 3
    # A read horizon not moved for this long no longer counts (see settings).
    horizon_stale_seconds: float = 90.0
    max_attempts_by_type: dict[str, int] = field(default_factory=dict)
    retry_policy_by_type: dict[str, dict[str, Any]] = field(default_factory=dict)

    def policy_for(self, row_policy: dict[str, Any] | None) -> RetryPolicy:
        """The retry policy stored on a job row (the defaults when it has none)."""
        if not row_policy:
            return self.retry_policy
        return RetryPolicy(**row_policy)
