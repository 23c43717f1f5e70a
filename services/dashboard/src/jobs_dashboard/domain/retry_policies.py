"""Named retry policies (pure): the list and the platform's default. The create request and
a policy's view are the scheduler's contract (``jobs_common.retry_policy_commands``)."""

from __future__ import annotations

from jobs_common.api_models import CamelModel
from jobs_common.retry_defaults import DEFAULT_RETRY
from jobs_common.retry_policy_commands import RetryPolicyFields, RetryPolicyView


class RetryPolicyList(CamelModel):
    items: list[RetryPolicyView]


# The platform's default (the scheduler's unless its SCHEDULER_RETRY_* say otherwise), shown
# by the UI.
DEFAULT_POLICY = RetryPolicyFields(
    strategy=DEFAULT_RETRY.strategy,
    base_delay_ms=DEFAULT_RETRY.base_delay_ms,
    multiplier=DEFAULT_RETRY.multiplier,
    max_delay_ms=DEFAULT_RETRY.max_delay_ms,
    jitter=DEFAULT_RETRY.jitter,
    max_attempts=None,
)
