"""Read models the dashboard answers with (camelCase JSON through CamelModel)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from jobs_common.api_models import CamelModel
from jobs_common.contracts import JobStatus


class JobSummary(CamelModel):
    job_id: uuid.UUID
    type: str
    priority: int = Field(ge=1, le=3)
    status: JobStatus
    attempt: int = Field(description="Current attempt number; 0 before the first dispatch.")
    max_attempts: int = Field(
        description="The attempt at which the job runs out (raised by a manual retry)."
    )
    submitted_by: str
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    last_error: str | None


class JobAttempt(CamelModel):
    attempt: int
    status: str
    worker_id: str | None
    dispatched_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_ms: int | None
    error_class: str | None
    error: str | None


class TimelineEntry(CamelModel):
    from_status: str | None
    to_status: str
    reason: str
    attempt: int
    at: datetime


class DeadLetterInfo(CamelModel):
    id: uuid.UUID
    reason: str
    last_error: str | None
    created_at: datetime


class JobDetail(JobSummary):
    payload: dict[str, Any]
    result: dict[str, Any] | None
    last_error_class: str | None
    timeout_seconds: int
    run_at: datetime | None
    lease_expires_at: datetime | None
    worker_id: str | None
    trace_id: str | None
    attempts: list[JobAttempt]
    timeline: list[TimelineEntry]
    dead_letter: DeadLetterInfo | None


class JobsPage(CamelModel):
    items: list[JobSummary]
    page_number: int
    page_size: int
    total_items: int
    total_pages: int


class RuntimeStats(CamelModel):
    mean_ms: float | None
    p95_ms: float | None


class JobAnalytics(CamelModel):
    total: int
    counts_by_status: dict[str, int]
    counts_by_type: dict[str, int]
    counts_by_priority: dict[str, int]
    success_rate: float | None
    runtime: RuntimeStats
    throughput_last_hour: int


class RetryAccepted(CamelModel):
    job_id: uuid.UUID
    status: Literal["retry_requested"] = "retry_requested"
