"""Message contracts: one frozen pydantic model per message type, JSON bodies, version 1.

Bodies travel as JSON (orjson); ``message_id`` and ``trace_id`` travel in the AMQP
properties/headers as well, set by the publisher from the model.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

SCHEMA_VERSION: Literal[1] = 1


def _require_aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("datetime must be timezone-aware")
    return value


AwareDatetime = Annotated[datetime, AfterValidator(_require_aware)]


def utcnow() -> datetime:
    return datetime.now(UTC)


class JobStatus(StrEnum):
    PENDING = "pending"
    BLOCKED = "blocked"
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    RUNNING = "running"
    FAILED = "failed"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    CANCELLED = "cancelled"


TERMINAL_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED})


class Message(BaseModel):
    """Base of every message: frozen, strict about unknown fields, versioned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    v: Literal[1] = SCHEMA_VERSION
    message_id: uuid.UUID = Field(default_factory=uuid.uuid4)
    trace_id: str = Field(default_factory=lambda: uuid.uuid4().hex)

    def to_json(self) -> bytes:
        return orjson.dumps(self.model_dump(mode="json"))


class JobSubmitted(Message):
    """submission -> scheduler: a job was accepted and must be recorded exactly once."""

    type: Literal["job.submitted"] = "job.submitted"
    job_id: uuid.UUID
    job_type: str
    priority: int = Field(ge=1, le=3)
    payload: dict[str, Any]
    submitted_by: str
    max_attempts: int | None = Field(default=None, ge=1, le=20)
    timeout_seconds: int | None = Field(default=None, ge=1)
    submitted_at: AwareDatetime


class JobDispatch(Message):
    """scheduler -> worker (ready queues): run attempt ``attempt`` of a job."""

    type: Literal["job.dispatch"] = "job.dispatch"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    job_type: str
    priority: int = Field(ge=1, le=3)
    payload: dict[str, Any]
    timeout_seconds: int = Field(ge=1)
    dispatched_at: AwareDatetime


class JobRunning(Message):
    """worker -> scheduler: the attempt started on a worker."""

    type: Literal["job.running"] = "job.running"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    worker_id: str
    started_at: AwareDatetime


class ErrorKind(StrEnum):
    RETRYABLE = "retryable"
    PERMANENT = "permanent"
    TIMEOUT = "timeout"


class JobError(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ErrorKind
    error_class: str
    message: str


class JobResult(Message):
    """worker -> scheduler: the attempt ended."""

    type: Literal["job.result"] = "job.result"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    worker_id: str
    outcome: Literal["succeeded", "failed"]
    result: dict[str, Any] | None = None
    error: JobError | None = None
    started_at: AwareDatetime
    finished_at: AwareDatetime


class RetryRequested(Message):
    """dashboard -> scheduler: a person asked to run a dead job again."""

    type: Literal["job.retry"] = "job.retry"
    job_id: uuid.UUID
    requested_by: str
    requested_at: AwareDatetime


AnyMessage = JobSubmitted | JobDispatch | JobRunning | JobResult | RetryRequested
M = TypeVar("M", bound=Message)


def parse_message(model: type[M], body: bytes) -> M:
    """Parse a JSON body into ``model``; raises pydantic.ValidationError or ValueError."""
    return model.model_validate_json(body)
