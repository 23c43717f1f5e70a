"""Named retry policies between the dashboard and the scheduler, which owns
``retry_policies``: a create request (checked by the dashboard, the public API's schema) goes
to the scheduler's internal API (``/internal/v1/retry-policies``), which stores it unless the
name is taken in its project (409) and answers with the stored policy."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from jobs_common.api_models import CamelModel
from jobs_common.auth import Identity
from jobs_common.contracts import RetryStrategy
from jobs_common.tenancy import OrgRole, personal_project_id

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


def policy_project(identity: Identity) -> uuid.UUID | None:
    """Where a create request stores its policy: the request's project, which takes an admin
    of it (403 below, 404 when not the caller's); None (shared by every project) for the
    platform admin naming no project."""
    if identity.is_admin and identity.api_key is None and identity.grants is None:
        return None
    project = identity.project_id or str(personal_project_id(identity.email))
    identity.require(project, OrgRole.ADMIN, to="manage retry policies", missing="not found")
    return uuid.UUID(project)


class RetryPolicyView(RetryPolicyFields):
    name: str
    project_id: uuid.UUID | None = Field(description="Its project; null: shared by every project.")
    created_by: str
    created_at: datetime
