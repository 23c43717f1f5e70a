"""What the API answers, as frozen dataclasses with Python names.

The wire is camelCase JSON (``jobId``, ``maxAttempts``); each model names its fields in
snake_case, parses timestamps into aware datetimes, and keeps the answer it was read from in
``raw`` (every field, including those this version does not model). Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

# A delay in seconds, or as a timedelta (rounded up to whole seconds when sent).
Delay = float | int | timedelta


class PayloadModel(Protocol):
    """A pydantic model (anything with its ``model_dump``): sent as its JSON by alias."""

    def model_dump(self, *, mode: str = ..., by_alias: bool = ...) -> dict[str, Any]: ...


# A payload as a mapping, or as a payload model.
Payload = Mapping[str, Any] | PayloadModel

T = TypeVar("T")

#: Statuses after which a job never changes again (a manual retry of a dead job aside).
TERMINAL_STATUSES = frozenset({"succeeded", "dead", "cancelled"})
JOB_STATUSES = (
    "pending",
    "blocked",
    "scheduled",
    "queued",
    "running",
    "failed",
    "succeeded",
    "dead",
    "cancelled",
)

Json = dict[str, Any]


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(str(value))


def _req_time(value: Any) -> datetime:
    parsed = _time(value)
    if parsed is None:
        raise ValueError("a required timestamp is missing")
    return parsed


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _object(value: Any) -> Json:
    return dict(value) if isinstance(value, Mapping) else {}


@dataclass(frozen=True, kw_only=True)
class Tokens:
    """A session's token pair (``POST /auth/login`` and ``/auth/refresh``).

    ``expires_at`` is the access token's end in seconds since the epoch, by this machine's
    clock (from ``expiresIn`` when the pair was received). The refresh token is single-use:
    each refresh answers its successor."""

    access_token: str
    refresh_token: str | None
    expires_at: float | None
    email: str | None = None
    role: str | None = None

    @classmethod
    def from_login(cls, body: Mapping[str, Any], *, now: float) -> Tokens:
        user = _object(body.get("user"))
        expires_in = body.get("expiresIn")
        return cls(
            access_token=str(body["token"]),
            refresh_token=_opt_str(body.get("refreshToken")),
            expires_at=now + float(expires_in) if expires_in is not None else None,
            email=_opt_str(user.get("email")),
            role=_opt_str(user.get("role")),
        )


@dataclass(frozen=True, kw_only=True)
class Submitted:
    """The answer to a submission (202): the job's id and the Idempotency-Key it was sent
    with. ``replayed`` is True when the server said the key had been seen (the
    ``Idempotent-Replayed`` header; see docs/client.md on when it reaches the client)."""

    job_id: str
    status: str
    idempotency_key: str
    replayed: bool = False


@dataclass(frozen=True, kw_only=True)
class BatchSubmitted:
    batch_id: str
    job_ids: list[str]
    status: str
    idempotency_key: str
    replayed: bool = False


@dataclass(frozen=True)
class JobProgress:
    """How far a running attempt got, as its handler last said (``ctx.progress``)."""

    percent: float
    message: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None) -> JobProgress | None:
        if not body:
            return None
        return cls(float(body["percent"]), _opt_str(body.get("message")))


@dataclass(frozen=True, kw_only=True)
class Attempt:
    attempt: int
    status: str
    worker_id: str | None
    started_at: datetime | None
    finished_at: datetime | None
    duration_ms: int | None
    error_class: str | None
    error: str | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Attempt:
        return cls(
            attempt=int(body.get("attempt", 0)),
            status=str(body.get("status", "")),
            worker_id=_opt_str(body.get("workerId")),
            started_at=_time(body.get("startedAt")),
            finished_at=_time(body.get("finishedAt")),
            duration_ms=body.get("durationMs"),
            error_class=_opt_str(body.get("errorClass")),
            error=_opt_str(body.get("error")),
        )


@dataclass(frozen=True, kw_only=True)
class Job:
    """A job as ``GET /api/jobs`` lists it, or (``detailed``) as ``GET /api/jobs/{id}``
    answers it: then ``payload``, ``result``, ``attempts`` and ``timeline`` are filled too."""

    id: str
    type: str
    priority: int
    status: str
    attempt: int
    max_attempts: int
    submitted_by: str
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    last_error: str | None
    schedule_id: str | None
    batch_id: str | None
    run_at: datetime | None
    depends_on: list[str]
    detailed: bool = False
    payload: Json | None = None
    result: Any = None
    attempts: list[Attempt] = field(default_factory=list)
    timeline: list[Json] = field(default_factory=list)
    # The running attempt's latest progress (detailed only; None when it reported none).
    progress: JobProgress | None = None
    raw: Json = field(default_factory=dict, repr=False)

    @property
    def finished(self) -> bool:
        """In a terminal state: succeeded, dead or cancelled."""
        return self.status in TERMINAL_STATUSES

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Job:
        detailed = "attempts" in body or "payload" in body
        return cls(
            id=str(body["jobId"]),
            type=str(body["type"]),
            priority=int(body["priority"]),
            status=str(body["status"]),
            attempt=int(body.get("attempt", 0)),
            max_attempts=int(body.get("maxAttempts", 0)),
            submitted_by=str(body.get("submittedBy", "")),
            created_at=_req_time(body.get("createdAt")),
            updated_at=_req_time(body.get("updatedAt")),
            started_at=_time(body.get("startedAt")),
            finished_at=_time(body.get("finishedAt")),
            last_error=_opt_str(body.get("lastError")),
            schedule_id=_opt_str(body.get("scheduleId")),
            batch_id=_opt_str(body.get("batchId")),
            run_at=_time(body.get("runAt")),
            depends_on=[str(x) for x in body.get("dependsOn") or []],
            detailed=detailed,
            payload=_object(body["payload"]) if detailed and body.get("payload") else None,
            result=body.get("result"),
            attempts=[Attempt.from_json(a) for a in body.get("attempts") or []],
            timeline=[_object(e) for e in body.get("timeline") or []],
            progress=JobProgress.from_json(body.get("progress")),
            raw=dict(body),
        )


@dataclass(frozen=True, kw_only=True)
class Page(Generic[T]):
    """One page of a listing (``pageNumber`` counts from 1)."""

    items: list[T]
    page_number: int
    page_size: int
    total_items: int
    total_pages: int

    @property
    def last(self) -> bool:
        return self.page_number >= self.total_pages


def parse_page(body: Mapping[str, Any], item: Any) -> Page[Any]:
    return Page(
        items=[item(x) for x in body.get("items") or []],
        page_number=int(body.get("pageNumber", 1)),
        page_size=int(body.get("pageSize", 0)),
        total_items=int(body.get("totalItems", 0)),
        total_pages=int(body.get("totalPages", 0)),
    )


@dataclass(frozen=True, kw_only=True)
class LogLine:
    id: int
    attempt: int
    level: str
    message: str
    at: datetime
    worker_id: str | None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> LogLine:
        return cls(
            id=int(body["id"]),
            attempt=int(body.get("attempt", 0)),
            level=str(body.get("level", "")),
            message=str(body.get("message", "")),
            at=_req_time(body.get("at")),
            worker_id=_opt_str(body.get("workerId")),
            raw=dict(body),
        )


@dataclass(frozen=True, kw_only=True)
class CommandAccepted:
    """The answer to ``retry`` (``retry_requested``) and ``cancel`` (``cancelled`` when the
    scheduler cancelled it within the dashboard's wait, else ``cancel_requested``)."""

    job_id: str
    status: str

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> CommandAccepted:
        return cls(job_id=str(body["jobId"]), status=str(body["status"]))


@dataclass(frozen=True, kw_only=True)
class RequeueAccepted:
    dead_letter_id: str
    job_id: str
    status: str

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> RequeueAccepted:
        return cls(
            dead_letter_id=str(body["deadLetterId"]),
            job_id=str(body["jobId"]),
            status=str(body.get("status", "requeue_requested")),
        )


@dataclass(frozen=True, kw_only=True)
class JobType:
    """A job type a submission may name (``GET /api/job-types``)."""

    type: str
    builtin: bool
    payload_schema: Json
    result_schema: Json | None
    queue: str
    timeout_seconds: int | None
    max_attempts: int | None
    slots: int
    live_workers: int
    announced_at: datetime | None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> JobType:
        result_schema = body.get("resultSchema")
        return cls(
            type=str(body["type"]),
            builtin=bool(body.get("builtin")),
            payload_schema=_object(body.get("payloadSchema")),
            result_schema=None if result_schema is None else _object(result_schema),
            queue=str(body.get("queue", "default")),
            timeout_seconds=body.get("timeoutSeconds"),
            max_attempts=body.get("maxAttempts"),
            slots=int(body.get("slots") or 1),
            live_workers=int(body.get("liveWorkers") or 0),
            announced_at=_time(body.get("announcedAt")),
            raw=dict(body),
        )


@dataclass(frozen=True, kw_only=True)
class Schedule:
    id: str
    name: str
    cron: str
    timezone: str
    job_template: Json
    owner: str
    paused: bool
    next_fire_at: datetime | None
    last_fire_at: datetime | None
    last_job_id: str | None
    created_at: datetime
    updated_at: datetime
    # The handler module that declares it in code (``@handler(schedules=...)``) and when a
    # worker last declared it; None for a schedule made through the API.
    declared_in: str | None = None
    declared_at: datetime | None = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Schedule:
        return cls(
            id=str(body["id"]),
            name=str(body["name"]),
            cron=str(body["cron"]),
            timezone=str(body["timezone"]),
            job_template=_object(body.get("jobTemplate")),
            owner=str(body.get("owner", "")),
            paused=bool(body.get("paused")),
            next_fire_at=_time(body.get("nextFireAt")),
            last_fire_at=_time(body.get("lastFireAt")),
            last_job_id=_opt_str(body.get("lastJobId")),
            created_at=_req_time(body.get("createdAt")),
            updated_at=_req_time(body.get("updatedAt")),
            declared_in=_opt_str(body.get("declaredIn")),
            declared_at=_time(body.get("declaredAt")),
            raw=dict(body),
        )


@dataclass(frozen=True, kw_only=True)
class DeadLetter:
    id: str
    job_id: str
    job_type: str
    job_status: str
    attempt: int
    reason: str
    last_error: str | None
    last_error_class: str | None
    fingerprint: str
    payload_snapshot: Json
    created_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    resolution: str | None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> DeadLetter:
        return cls(
            id=str(body["id"]),
            job_id=str(body["jobId"]),
            job_type=str(body.get("jobType", "")),
            job_status=str(body.get("jobStatus", "")),
            attempt=int(body.get("attempt", 0)),
            reason=str(body.get("reason", "")),
            last_error=_opt_str(body.get("lastError")),
            last_error_class=_opt_str(body.get("lastErrorClass")),
            fingerprint=str(body.get("fingerprint", "")),
            payload_snapshot=_object(body.get("payloadSnapshot")),
            created_at=_req_time(body.get("createdAt")),
            resolved_at=_time(body.get("resolvedAt")),
            resolved_by=_opt_str(body.get("resolvedBy")),
            resolution=_opt_str(body.get("resolution")),
            raw=dict(body),
        )


@dataclass(frozen=True, kw_only=True)
class JobChange:
    """One status change pushed on the live events socket (a ``job.changes`` frame holds
    several). ``from_status`` is None for the job's first recorded state."""

    job_id: str
    attempt: int
    from_status: str | None
    to_status: str
    reason: str | None
    job_type: str | None
    at: datetime | None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> JobChange:
        return cls(
            job_id=str(body["jobId"]),
            attempt=int(body.get("attempt") or 0),
            from_status=_opt_str(body.get("fromStatus")),
            to_status=str(body["toStatus"]),
            reason=_opt_str(body.get("reason")),
            job_type=_opt_str(body.get("jobType")),
            at=_time(body.get("at")),
            raw=dict(body),
        )


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """An inline retry policy for ``submit(retry_policy=...)``; a field left None takes the
    job type's default in the scheduler. (A string names a stored policy instead.)"""

    strategy: str | None = None  # fixed | linear | exponential
    base_delay_ms: int | None = None
    multiplier: float | None = None
    max_delay_ms: int | None = None
    jitter: bool | None = None

    def to_json(self) -> Json:
        wire = {
            "strategy": self.strategy,
            "baseDelayMs": self.base_delay_ms,
            "multiplier": self.multiplier,
            "maxDelayMs": self.max_delay_ms,
            "jitter": self.jitter,
        }
        return {k: v for k, v in wire.items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """One job of ``submit_batch``: the arguments of ``submit`` plus ``ref``, a label other
    specs of the same batch name in ``depends_on`` as ``"ref:<label>"``."""

    type: str
    payload: Payload
    priority: int | None = None  # its queue's default priority, else 2
    run_at: datetime | str | None = None
    delay: Delay | None = None  # seconds, or a timedelta (rounded up to whole seconds)
    max_attempts: int | None = None
    timeout_seconds: int | None = None
    retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None
    depends_on: Sequence[str] | None = None
    ref: str | None = None
    queue: str | None = None  # the project's queue (docs/flow-control.md); default: the type's
