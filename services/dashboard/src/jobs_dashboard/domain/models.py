"""Read models the dashboard answers with (camelCase JSON through CamelModel)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from jobs_common.api_models import CamelModel, Page
from jobs_common.contracts import JobStatus, RetryStrategy


class EffectivePolicy(CamelModel):
    """A job's effective retry policy as the scheduler stored it (snake or camel keys)."""

    model_config = ConfigDict(extra="ignore")

    strategy: RetryStrategy | None = None
    base_delay_ms: int | None = None
    multiplier: float | None = None
    max_delay_ms: int | None = None
    jitter: bool | None = None


class AttemptError(CamelModel):
    """A job's latest error, by the attempt that met it (``domain/job_errors.py``)."""

    attempt: int | None = Field(
        description="The attempt that failed with it; null when none ran (e.g. a parent failed)."
    )
    error_class: str | None
    message: str | None
    current: bool = Field(
        description="True while it is the job's present state (dead, failed, or waiting to "
        "retry after it); false once a later attempt runs or the job succeeded."
    )


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
    project_id: uuid.UUID = Field(description="The project the job belongs to (docs/tenancy.md).")
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    last_error: str | None
    latest_error: AttemptError | None = Field(
        default=None, description="lastError labelled by its attempt, and whether it is current."
    )
    schedule_id: uuid.UUID | None
    batch_id: uuid.UUID | None
    run_at: datetime | None = Field(description="When a delayed job (or a backoff) is due.")
    depends_on: list[uuid.UUID] = Field(description="Parent job ids (the job waits for them).")
    cancel_requested_at: datetime | None
    retry_policy: EffectivePolicy | None


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


class ParentJob(CamelModel):
    job_id: uuid.UUID
    status: JobStatus | None = Field(description="None while the parent is not recorded yet.")


class ChildJob(CamelModel):
    job_id: uuid.UUID
    job_type: str = Field(alias="type")
    status: JobStatus


# Children listed in a job's detail, oldest first; ``childrenTotal`` counts them all.
CHILDREN_LIMIT = 100


class JobProgress(CamelModel):
    percent: float = Field(description="0 to 100, as the handler last reported it.")
    message: str | None


class JobDetail(JobSummary):
    payload: dict[str, Any]
    result: dict[str, Any] | None
    last_error_class: str | None
    timeout_seconds: int
    lease_expires_at: datetime | None
    queued_at: datetime | None
    deadline_at: datetime | None
    lost_count: int
    cancel_requested_by: str | None
    waiting_reason: str | None = Field(
        default=None,
        description="Why this queued job is not dispatched: no live worker serves its type "
        "(it starts when one does). Null when it is not waiting for a worker.",
    )
    parents: list[ParentJob] = Field(description="dependsOn with each parent's status.")
    children: list[ChildJob] = Field(
        description=f"Jobs that depend on this one and the caller may see, oldest first, at "
        f"most {CHILDREN_LIMIT}."
    )
    children_total: int = Field(description="How many such jobs there are in all.")
    worker_id: str | None
    trace_id: str | None
    progress: JobProgress | None = Field(
        default=None,
        description="The running attempt's latest progress (the handler's ctx.progress, "
        "carried by heartbeats); null when it reported none or the job is not running.",
    )
    attempts: list[JobAttempt]
    timeline: list[TimelineEntry]
    dead_letter: DeadLetterInfo | None


class JobsPage(Page[JobSummary]):
    next_cursor: str | None = Field(
        default=None,
        description="Pass as cursor (same filters and order) for the next page; null on the last.",
    )
    total_capped: bool = Field(
        default=False,
        description="A search matched more jobs than totalItems, which counts at most 10,000 "
        "of them (nextCursor still leads past them).",
    )


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


class SeriesBucket(CamelModel):
    start: datetime
    created: int = Field(description="Jobs created in the window.")
    succeeded: int
    dead: int
    cancelled: int
    unfinished: int = Field(description="Of them, not terminal yet.")


class JobSeries(CamelModel):
    """The jobs created in each window, by how they ended (or not yet): oldest window first,
    the last one holding now."""

    bucket_minutes: int
    buckets: list[SeriesBucket]


class RetryAccepted(CamelModel):
    job_id: uuid.UUID
    status: Literal["retry_requested"] = "retry_requested"


class CancelOutcome(CamelModel):
    job_id: uuid.UUID
    status: Literal["cancelled", "cancel_requested"]


class LogLine(CamelModel):
    id: int
    attempt: int
    worker_id: str | None = Field(description="The worker that wrote the line (admins only).")
    level: str
    message: str
    at: datetime


class LogPage(CamelModel):
    items: list[LogLine]
    next_after_id: int = Field(description="Pass as afterId to read the lines after these.")
