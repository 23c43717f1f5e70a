"""Message contracts: one frozen pydantic model per message type, JSON bodies, version 1.

Bodies travel as JSON (orjson); ``message_id`` and ``trace_id`` travel in the AMQP
properties/headers as well, set by the publisher from the model.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from jobs_common.ids import new_id
from jobs_common.tenancy import personal_project_id

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


# A named queue (and its ready queues' middle part): jobs.ready.<name>.<priority>.
QUEUE_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"

# The priority of a job that names none, in a queue without a default priority: medium.
DEFAULT_PRIORITY = 2

TERMINAL_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.CANCELLED})


# Messages and what they carry ignore fields they do not know: a release that adds a field
# reaches its readers in any order during a rolling deploy (a reader refusing it as poison
# lost the message's job). A change of meaning is a new version (``v``), refused as poison.
WIRE = ConfigDict(frozen=True, extra="ignore")


class Message(BaseModel):
    """Base of every message: frozen, versioned, deaf to fields a later release adds."""

    model_config = WIRE

    v: Literal[1] = SCHEMA_VERSION
    message_id: uuid.UUID = Field(default_factory=new_id)
    trace_id: str = Field(default_factory=lambda: uuid.uuid4().hex)

    def to_json(self) -> bytes:
        return orjson.dumps(self.model_dump(mode="json"))


class Envelope(Message):
    """Several messages of one kind in one message (one each cost a publish and a delivery).

    ``single`` names the kind a sender used to send one at a time, the list field, and the
    fields the envelope takes from it: such a message still reads, as an envelope of one.
    """

    single: ClassVar[tuple[str, str, tuple[str, ...]]]

    @model_validator(mode="before")
    @classmethod
    def _one_of_them(cls, data: Any) -> Any:
        kind, items, carried = cls.single
        if isinstance(data, dict) and data.get("type") == kind:
            return {**{name: data.get(name) for name in carried}, items: [data]}
        return data


RetryStrategy = Literal["fixed", "linear", "exponential"]


class RetryPolicySpec(BaseModel):
    """A job's retry policy; omitted fields take the job type's configured defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    strategy: RetryStrategy | None = None
    base_delay_ms: int | None = Field(default=None, ge=0, le=86_400_000, alias="baseDelayMs")
    multiplier: float | None = Field(default=None, ge=1, le=100)
    max_delay_ms: int | None = Field(default=None, ge=0, le=86_400_000, alias="maxDelayMs")
    jitter: bool | None = None


class JobSubmitted(Message):
    """submission -> scheduler: a job was accepted and must be recorded exactly once.

    ``run_at`` delays the first attempt; ``retry_policy`` (inline) or ``retry_policy_name``
    (a stored named policy) overrides the type's defaults; ``depends_on`` keeps the job
    blocked until every parent succeeded; ``batch_id``/``batch_size`` make it a batch member.
    """

    type: Literal["job.submitted"] = "job.submitted"
    job_id: uuid.UUID
    job_type: str
    priority: int = Field(ge=1, le=3)
    # True: the submission named no priority; its queue's default priority replaces
    # ``priority`` (DEFAULT_PRIORITY) when the queue has one (docs/flow-control.md).
    priority_default: bool = False
    payload: dict[str, Any]
    submitted_by: str
    # The project the job belongs to (docs/tenancy.md); None (a submission of an earlier
    # release): its owner's personal default project (:meth:`project`).
    project_id: uuid.UUID | None = None
    # The prefix of the API key that submitted it (its timeline says so); None: a person.
    api_key: str | None = Field(default=None, max_length=40)
    max_attempts: int | None = Field(default=None, ge=1, le=20)
    timeout_seconds: int | None = Field(default=None, ge=1)
    # True: the submission named no timeout (``timeout_seconds`` is its type's): its queue's
    # default timeout replaces it when the queue has one (docs/flow-control.md).
    timeout_default: bool = False
    submitted_at: AwareDatetime
    run_at: AwareDatetime | None = None
    retry_policy: RetryPolicySpec | None = None
    retry_policy_name: str | None = None
    depends_on: list[uuid.UUID] = Field(default_factory=list, max_length=100)
    batch_id: uuid.UUID | None = None
    batch_size: int | None = Field(default=None, ge=1, le=10_000)
    # The named queue of the job's type (the registry's): its ready queues are
    # jobs.ready.<queue>.<priority>, "default" the three shared ones.
    queue: str = Field(default="default", pattern=QUEUE_NAME_PATTERN)
    # A batch member's own ref: its children in the batch read its result by it.
    ref: str | None = Field(default=None, max_length=100)

    def project(self) -> uuid.UUID:
        return self.project_id or personal_project_id(self.submitted_by)


class JobsSubmitted(Envelope):
    """submission -> scheduler (jobs.submitted): the jobs one relay pass took from the outbox,
    several to a message (a message per job cost a confirmed publish and a delivery each).
    Each job keeps its own ``message_id`` and ``trace_id``; the scheduler records each once
    (idempotent on the job id), and a job it cannot record is stored as poison alone."""

    single: ClassVar[tuple[str, str, tuple[str, ...]]] = ("job.submitted", "jobs", ("trace_id",))

    type: Literal["jobs.submitted"] = "jobs.submitted"
    jobs: list[JobSubmitted] = Field(min_length=1, max_length=1_000)


# What a dispatch carries of its parents' results together, at most (JSON bytes): a result
# that does not fit is named with its size and no value (docs/sdk.md, "Parent results").
PARENT_RESULTS_MAX_BYTES = 256 * 1024


class ParentResult(BaseModel):
    """A DAG child's parent as its dispatch carries it: the parent succeeded with ``result``,
    or, ``omitted``, with a result of ``size`` bytes too large to carry."""

    model_config = WIRE

    job_id: uuid.UUID
    ref: str | None = None  # its ref in the child's batch
    result: dict[str, Any] | None = None
    omitted: bool = False
    size: int | None = Field(default=None, ge=0)


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
    # Until then a worker runs a first delivery without asking; a later one (it waited in the
    # queue) may have a copy (``COPY_HEADER``), so it is claimed first. None: always fresh.
    fresh_until: AwareDatetime | None = None
    # Sent again after a worker handed the attempt back (it does not serve the type): the first
    # delivery may have been a copy's twin, so this one is claimed, as a relay's copy is.
    resent: bool = False
    # Who the job runs for: ``ctx.submit`` submits follow-ups as this owner, in this project
    # (None: a dispatch of an earlier release, which cannot submit).
    submitted_by: str | None = None
    project_id: uuid.UUID | None = None
    # A DAG child's parents and their results (empty for a job without parents).
    parents: list[ParentResult] = Field(default_factory=list, max_length=100)


# An AMQP header on a ready message the scheduler's relay published again because it could not
# know whether the broker took the first one (the pass died, or the confirm was lost): a copy
# is always claimed before it runs.
COPY_HEADER = "x-jobs-copy"

# How long after its dispatch a worker runs a first delivery without asking, behind no backlog.
FRESH_DISPATCH = timedelta(seconds=5)

# An AMQP header on a ready dispatch (epoch milliseconds, an integer: AMQP floats are 32-bit)
# until when a first delivery of it runs
# unasked, overriding ``JobDispatch.fresh_until``. The relay sets it from the backlog ahead of
# the message in its queue when it publishes it, so a dispatch behind a long backlog is not
# claimed for having waited there. On a copy: the window of the first publish, which the
# copy's claim waits past (docs/scheduler.md, "Claims").
FRESH_HEADER = "x-jobs-fresh-until"


class JobRunning(Message):
    """worker -> scheduler: the attempt started on a worker."""

    type: Literal["job.running"] = "job.running"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    worker_id: str
    started_at: AwareDatetime
    # A claim, not a start: the broker redelivered the ready message (its first holder's
    # connection died, or the holder died), so the worker asks before it runs anything. The
    # scheduler answers with a ``ClaimVerdict`` and starts (or takes over) the attempt only
    # when no live worker can still be running it (``domain/claims.py``).
    redelivered: bool = False
    # The claim of an attempt that no worker reported yet waits until the scheduler has read
    # a lease of heartbeats and results since then, by when every live holder would have
    # reported it: for a redelivery, when this worker first asked (a repeated ask keeps it);
    # for a relay's copy, when the attempt was dispatched. None: a first delivery that waited
    # past its ``fresh_until``; no other copy can run unasked then, so it need not wait.
    claim_since: AwareDatetime | None = None


class ErrorKind(StrEnum):
    RETRYABLE = "retryable"
    PERMANENT = "permanent"
    TIMEOUT = "timeout"


class JobError(BaseModel):
    model_config = WIRE

    kind: ErrorKind
    error_class: str
    message: str
    # A retryable failure's own delay before the next attempt (the SDK's ``RetryLater``), in
    # place of the job's retry policy; still within the job's attempts.
    retry_after_seconds: float | None = Field(default=None, ge=0, le=86_400)


class JobResult(Message):
    """worker -> scheduler: the attempt ended."""

    type: Literal["job.result"] = "job.result"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    worker_id: str
    # ``unserved``: the worker does not serve the job's type and handed the attempt back
    # without running anything (a deploy reached some workers of a queue first); the
    # scheduler dispatches it where a live worker serves the type, or lets it wait for one.
    outcome: Literal["succeeded", "failed", "cancelled", "unserved"]
    result: dict[str, Any] | None = None
    error: JobError | None = None
    started_at: AwareDatetime
    finished_at: AwareDatetime


class JobLogLine(Message):
    """worker -> scheduler (jobs.logs): one log line of a running attempt."""

    type: Literal["job.log"] = "job.log"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    worker_id: str
    level: Literal["debug", "info", "warning", "error"]
    message: str = Field(max_length=8_000)
    at: AwareDatetime


class JobResults(Envelope):
    """worker -> scheduler (jobs.results): the results a worker had ready together, in one
    message (a message per result cost a confirmed publish and a delivery each). The scheduler
    applies each result on its own terms (fenced on ``(job_id, attempt)`` and its holder).

    ``lines`` are log lines (of any of the worker's attempts) that were still waiting for
    their own ``JobLogLines`` message when these results left: they ride along and are stored
    in the same transaction, so a short job costs no message on ``jobs.logs``."""

    single: ClassVar[tuple[str, str, tuple[str, ...]]] = ("job.result", "results", ("trace_id",))

    type: Literal["job.results"] = "job.results"
    results: list[JobResult] = Field(min_length=1, max_length=1_000)
    lines: list[JobLogLine] = Field(default_factory=list, max_length=1_000)


class RetryRequested(Message):
    """dashboard -> scheduler: run a dead job again (a retry, or a dead-letter requeue).

    ``payload`` replaces the job's payload (an edited requeue, validated by the sender);
    ``not_before`` spaces requeues out so a bulk replay cannot flood the workers.
    """

    type: Literal["job.retry"] = "job.retry"
    job_id: uuid.UUID
    requested_by: str
    requested_at: AwareDatetime
    reason: str | None = None
    payload: dict[str, Any] | None = None
    not_before: AwareDatetime | None = None


class CancelRequested(Message):
    """dashboard -> scheduler (jobs.cancel): a person asked to cancel a job."""

    type: Literal["job.cancel"] = "job.cancel"
    job_id: uuid.UUID
    requested_by: str
    requested_at: AwareDatetime
    reason: str | None = None


class ActiveAttempt(BaseModel):
    model_config = WIRE

    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    # When the attempt started on the worker: a heartbeat applied before the attempt's
    # ``JobRunning`` (a scheduler that restarted reads the queues in any order) starts the
    # attempt from it. None from workers that predate the field (the send time stands in).
    started_at: AwareDatetime | None = None
    # The handler's latest ``ctx.progress(percent, message)``, shown on the job's page.
    progress: float | None = Field(default=None, ge=0, le=100)
    progress_message: str | None = Field(default=None, max_length=500)


class WorkerHeartbeat(Message):
    """worker -> scheduler (jobs.heartbeat), every few seconds: the worker is alive, renews the
    leases of the attempts it runs, and describes itself for the worker registry."""

    type: Literal["worker.heartbeat"] = "worker.heartbeat"
    worker_id: str
    hostname: str
    pid: int
    version: str
    queues: list[str]
    concurrency: int
    active: list[ActiveAttempt]
    started_at: AwareDatetime
    sent_at: AwareDatetime
    stopping: bool = False
    # The job types this worker serves: the scheduler dispatches a job only where a live
    # worker serves its type (empty from workers that predate the field: they serve all).
    types: list[str] = Field(default_factory=list)
    # Quiet: an admin told it to take no new jobs (``WorkerControl``); it finishes its own.
    quiet: bool = False
    # Attempts this process ran to an outcome since it started, and those that failed
    # (cumulative: a redelivered or late heartbeat never counts one twice).
    processed: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)


class JobTypeInfo(BaseModel):
    """One job type as a worker serves it (``@handler`` in the worker SDK)."""

    model_config = WIRE

    job_type: str = Field(min_length=1, max_length=100)
    payload_schema: dict[str, Any]  # JSON Schema of the payload model
    result_schema: dict[str, Any] | None = None
    timeout_seconds: int = Field(ge=1)
    max_attempts: int = Field(ge=1)
    queue: str
    slots: int = Field(default=1, ge=1)


class WorkerTypes(Message):
    """worker -> submission (jobs.types): the job types this worker serves, sent when it
    starts, again every ``WORKER_TYPES_INTERVAL`` while it runs (its liveness for the
    registry) and once with ``leaving`` when it stops."""

    type: Literal["worker.types"] = "worker.types"
    worker_id: str
    types: list[JobTypeInfo]
    sent_at: AwareDatetime
    leaving: bool = False


class DeclaredSchedule(BaseModel):
    """A cron schedule a handler declares in code (``Cron`` in the SDK), its payload already
    validated by the handler's payload model; cron and time zone are checked again by the
    scheduler, which skips (and logs) a declaration it cannot use."""

    model_config = WIRE

    name: str = Field(min_length=1, max_length=200)
    cron: str = Field(min_length=1, max_length=200)
    timezone: str = Field(min_length=1, max_length=64)
    job_type: str = Field(min_length=1, max_length=100)
    payload: dict[str, Any]
    priority: int | None = Field(default=None, ge=1, le=3)  # None: the queue's default
    queue: str = Field(default="default", pattern=QUEUE_NAME_PATTERN)
    max_attempts: int = Field(ge=1)
    timeout_seconds: int = Field(ge=1)
    declared_in: str = Field(min_length=1, max_length=300)  # the handler's module


class WorkerSchedules(Message):
    """worker -> scheduler (jobs.schedules): the schedules this worker's handlers declare,
    for ``project_id`` (``WORKER_SCHEDULES_PROJECT``); sent with each announcement of its
    types. The scheduler creates or updates each by name, writing nothing when unchanged, so
    a lost message is made good by the next one and replicas never duplicate a schedule."""

    type: Literal["worker.schedules"] = "worker.schedules"
    worker_id: str
    project_id: uuid.UUID
    schedules: list[DeclaredSchedule]
    sent_at: AwareDatetime


class CancelAttempt(Message):
    """scheduler -> every worker (jobs.events, routing key ``control.cancel``): stop this
    attempt if you run it, and never start it; sent for a cancelled job and for an attempt
    whose lease the worker lost."""

    type: Literal["control.cancel"] = "control.cancel"
    job_id: uuid.UUID
    attempt: int | None = None
    reason: str
    # Only this worker acts on it (an attempt it lost); None: every worker (a cancelled job).
    worker_id: str | None = None


WorkerCommand = Literal["quiet", "stop"]


class WorkerControl(Message):
    """dashboard -> one worker (jobs.events, routing key ``control.worker``, seen by every
    worker, acted on by ``worker_id`` only): an admin's ``quiet`` (take no new jobs) or
    ``stop`` (quiet, then exit once the jobs it runs have finished)."""

    type: Literal["control.worker"] = "control.worker"
    worker_id: str = Field(min_length=1, max_length=200)
    command: WorkerCommand
    requested_by: str = Field(max_length=320)
    requested_at: AwareDatetime


ClaimAnswer = Literal["run", "skip", "wait"]


class ClaimVerdict(Message):
    """scheduler -> the claiming worker (jobs.events, routing key ``control.claim``, seen by
    every worker, acted on by ``worker_id`` only): may a redelivered attempt run there?
    ``run``: it is this worker's now (started or taken over, under a fresh lease); ``skip``:
    the attempt ended or moved on, ack the copy without running it; ``wait``: another worker
    may still hold it, ask again after ``retry_after`` seconds."""

    type: Literal["control.claim"] = "control.claim"
    job_id: uuid.UUID
    attempt: int = Field(ge=1)
    worker_id: str
    verdict: ClaimAnswer
    reason: str = Field(max_length=500)
    retry_after: float | None = Field(default=None, ge=0)


class JobLogLines(Envelope):
    """worker -> scheduler (jobs.logs): the log lines a worker gathered, of any of its
    attempts, in one message (a message per line cost one publish and one delivery each).
    Each line keeps its own ``message_id``: the scheduler stores a line once however often
    its message is delivered."""

    single: ClassVar[tuple[str, str, tuple[str, ...]]] = ("job.log", "lines", ("worker_id",))

    type: Literal["job.log_lines"] = "job.log_lines"
    worker_id: str
    lines: list[JobLogLine] = Field(min_length=1, max_length=1_000)


class ReadTick(Message):
    """scheduler -> the queues it consumes (jobs.heartbeat, jobs.results, jobs.running): a
    watermark. Queues are FIFO, so a replica that has applied the tick sent at ``sent_at`` has
    applied every message published to that queue before it: its read horizon. Leases are
    judged against the horizon, never against the wall clock, so a scheduler that lags behind
    its queues never takes its own lag for a silent worker."""

    type: Literal["scheduler.tick"] = "scheduler.tick"
    replica_id: str
    sent_at: AwareDatetime


class JobChange(BaseModel):
    """One status change of a job, as its transaction committed it."""

    model_config = WIRE

    job_id: uuid.UUID
    attempt: int = Field(ge=0)
    from_status: JobStatus | None
    to_status: JobStatus
    reason: str
    job_type: str
    submitted_by: str  # whose job
    # Its project, whose members see the change live; None from a scheduler of an earlier
    # release: the submitter's personal default project (:meth:`project`).
    project_id: uuid.UUID | None = None
    at: AwareDatetime

    def project(self) -> uuid.UUID:
        return self.project_id or personal_project_id(self.submitted_by)


class JobChanges(Message):
    """scheduler -> live listeners (jobs.events, routing key ``job.changes``): the status
    changes one transaction committed, published after the commit, transient and unconfirmed.
    Live views are best effort: a listener that missed some reads the state back over HTTP."""

    type: Literal["job.changes"] = "job.changes"
    changes: list[JobChange] = Field(min_length=1, max_length=1_000)


class JobLogTail(Message):
    """scheduler -> live listeners (jobs.events, routing key ``job.logs``): log lines one
    transaction stored, published after the commit like :class:`JobChanges`. Lines carry no
    owner: a listener shows a job's lines to whoever may read that job."""

    type: Literal["job.log_tail"] = "job.log_tail"
    lines: list[JobLogLine] = Field(min_length=1, max_length=1_000)


AnyMessage = (
    JobSubmitted
    | JobDispatch
    | JobRunning
    | JobResult
    | RetryRequested
    | CancelRequested
    | WorkerHeartbeat
    | CancelAttempt
    | JobLogLine
    | ReadTick
)
M = TypeVar("M", bound=Message)


def parse_message(model: type[M], body: bytes) -> M:
    """Parse a JSON body into ``model``; raises pydantic.ValidationError or ValueError."""
    return model.model_validate_json(body)
