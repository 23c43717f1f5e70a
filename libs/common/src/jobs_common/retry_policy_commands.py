"""Named retry policies between the dashboard and the scheduler, which owns
``retry_policies``: an admin's create request (checked by the dashboard, the public API's
schema) goes to the scheduler's internal API (``/internal/v1/retry-policies``), which stores
it unless the name is taken (409) and answers with the stored policy."""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from jobs_common.api_models import CamelModel
from jobs_common.contracts import RetryStrategy

RETRY_POLICIES_PATH = "/internal/v1/retry-policies"
POLICY_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
MAX_DELAY_MS = 86_400_000  # one day, as RetryPolicySpec allows


class RetryPolicyFields(CamelModel):
    strategy: RetryStrategy
    base_delay_ms: int = Field(ge=0, le=MAX_DELAY_MS)
    multiplier: float = Field(ge=1, le=100)
    max_delay_ms: int = Field(ge=0, le=MAX_DELAY_MS)
    jitter: bool
    max_attempts: int | None = Field(default=None, ge=1, le=20)


class RetryPolicyCreate(RetryPolicyFields):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        pattern=POLICY_NAME_PATTERN,
        description="Slug: 1-64 of a-z, 0-9, '-', '_', starting with a letter or digit.",
    )

    @field_validator("max_delay_ms")
    @classmethod
    def _max_not_below_base(cls, value: int, info: ValidationInfo) -> int:
        base = info.data.get("base_delay_ms")
        if isinstance(base, int) and value < base:
            raise ValueError("maxDelayMs must not be below baseDelayMs")
        return value


class RetryPolicyView(RetryPolicyFields):
    name: str
    created_by: str
    created_at: datetime
