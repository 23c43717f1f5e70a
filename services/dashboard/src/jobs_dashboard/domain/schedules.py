"""Cron schedules (pure): the create and upsert requests, their validation and the answers."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from jobs_common.api_models import CamelModel, Page
from jobs_common.contracts import JobStatus, RetryPolicySpec
from jobs_common.cron import check_cron, check_timezone, shortest_gap_seconds
from jobs_common.errors import ErrorDetail
from jobs_common.recipients import NOT_ALLOWED, RecipientAllowList
from jobs_common.retry_policy_commands import POLICY_NAME_PATTERN
from jobs_common.schedule_commands import ScheduleView
from jobs_dashboard.domain.payloads import CheckedPayload

MAX_TIMEOUT_SECONDS = 1700  # the submission's cap: below RabbitMQ's 30 min consumer timeout
LAST_FIRES = 20

MAX_NAME_LENGTH = 200
ScheduleName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_LENGTH)
]


class JobTemplate(CamelModel):
    """The job each fire creates, validated like a submission."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, max_length=100, description="A registered job type.")
    priority: int = Field(strict=True, ge=1, le=3)
    payload: dict[str, Any] = Field(description="Validated against the type's payload schema.")
    max_attempts: int | None = Field(default=None, strict=True, ge=1, le=20)
    timeout_seconds: int | None = Field(default=None, strict=True, ge=1, le=MAX_TIMEOUT_SECONDS)
    retry_policy: RetryPolicySpec | None = Field(
        default=None, description="Inline policy; omitted fields take the type's defaults."
    )
    retry_policy_name: str | None = Field(
        default=None, pattern=POLICY_NAME_PATTERN, description="A stored named retry policy."
    )

    @model_validator(mode="before")
    @classmethod
    def _policy_by_name(cls, data: Any) -> Any:
        """``retryPolicy`` may name a stored policy, as on a submission."""
        if isinstance(data, dict) and isinstance(data.get("retryPolicy"), str):
            data = dict(data)
            if data.get("retryPolicyName") is not None:
                raise ValueError("give retryPolicy as a name or retryPolicyName, not both")
            data["retryPolicyName"] = data.pop("retryPolicy")
        return data

    def stored(self, checked: CheckedPayload) -> dict[str, Any]:
        """The JSON kept in schedules.job_template (camelCase), with the payload as checked
        for its type (``payloads.check_payload``). A type's queue and defaults are kept as
        they are now: every fire runs the job the schedule was created for."""
        return {
            "type": self.type,
            "priority": self.priority,
            "payload": checked.payload,
            "queue": checked.queue,
            "maxAttempts": self.max_attempts or checked.max_attempts,
            "timeoutSeconds": self.timeout_seconds or checked.timeout_seconds,
            "retryPolicy": None
            if self.retry_policy is None
            else self.retry_policy.model_dump(mode="json", by_alias=True, exclude_none=True),
            "retryPolicyName": self.retry_policy_name,
        }


class ScheduleUpsert(CamelModel):
    """A schedule by name (``PUT /api/schedules/by-name/{name}``): the name is the path's."""

    model_config = ConfigDict(extra="forbid")

    cron: str = Field(
        max_length=200, description="5 fields: minute hour day-of-month month day-of-week."
    )
    timezone: str = Field(max_length=64, description="IANA time zone, e.g. Europe/Berlin.")
    job_template: JobTemplate

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, value: str) -> str:
        return check_cron(value)

    @field_validator("timezone")
    @classmethod
    def _valid_timezone(cls, value: str) -> str:
        check_timezone(value)
        return value


class ScheduleCreate(ScheduleUpsert):
    name: ScheduleName


class ScheduleFire(CamelModel):
    fire_time: datetime
    job_id: uuid.UUID
    fired_at: datetime
    job_status: JobStatus | None = Field(description="null until the scheduler records the job.")


class ScheduleDetail(ScheduleView):
    fires: list[ScheduleFire] = Field(description="The last 20 fires, newest first.")


class SchedulePage(Page[ScheduleView]):
    pass


def too_frequent_for_email(
    body: ScheduleUpsert, *, min_interval_seconds: int, now: datetime
) -> list[ErrorDetail]:
    """The 422 detail of an email schedule that fires more often than once per
    ``min_interval_seconds`` (0: any cron): each fire sends a mail, outside the email quota of
    the submission service."""
    if body.job_template.type != "email" or not min_interval_seconds:
        return []
    gap = shortest_gap_seconds(body.cron, body.timezone, now)
    if gap >= min_interval_seconds:
        return []
    return [
        ErrorDetail(
            field="cron",
            message=f"a schedule of email jobs may fire at most once every "
            f"{min_interval_seconds} s; this one fires {gap:.0f} s apart",
        )
    ]


def refused_recipient(template: dict[str, Any], allowed: RecipientAllowList) -> list[ErrorDetail]:
    """The 422 detail of an email template whose recipient is not on the allow-list."""
    if template.get("type") != "email":
        return []
    recipient = str(template.get("payload", {}).get("to", ""))
    if allowed.allows(recipient):
        return []
    return [ErrorDetail(field="jobTemplate.payload.to", message=NOT_ALLOWED)]
