"""The PostgreSQL job store schema, shared by the scheduler (writer, owns the migrations) and
the dashboard (reader). Migrations live in services/scheduler; a test checks they match."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from jobs_common.contracts import JobStatus

metadata = MetaData()

_STATUSES = ", ".join(f"'{s.value}'" for s in JobStatus)
_NOW = text("now()")

jobs = Table(
    "jobs",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("type", Text, nullable=False),
    Column("priority", SmallInteger, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("submitted_by", Text, nullable=False),
    # The project the job belongs to (docs/tenancy.md); a row inserted without one (an older
    # replica during a rolling deploy) gets its owner's personal default project (migration
    # 0013's trigger, jobs_common.tenancy.personal_project_id).
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("status", Text, nullable=False),
    Column("attempt", Integer, nullable=False, server_default=text("0")),
    Column("max_attempts", Integer, nullable=False),
    # The attempt number at which the job is out of attempts; a manual retry raises it.
    Column("attempt_limit", Integer, nullable=False),
    Column("timeout_seconds", Integer, nullable=False),
    # The named queue of the job's type: dispatched to jobs.ready.<queue>.<priority>.
    Column("queue", Text, nullable=False, server_default=text("'default'")),
    # The running attempt's latest ctx.progress: {"attempt", "percent", "message"}.
    Column("progress", JSONB),
    # Why a queued job has no ready message: no live worker serves its type (it is dispatched
    # when one arrives). NULL for every other job.
    Column("waiting_reason", Text),
    # While it waits: no ready message of its attempt was ever published (released as a
    # first delivery, not as a copy to claim).
    Column("waiting_unsent", Boolean),
    Column("run_at", DateTime(timezone=True)),
    Column("lease_expires_at", DateTime(timezone=True)),
    Column("worker_id", Text),
    Column("last_error", Text),
    Column("last_error_class", Text),
    Column("result", JSONB),
    Column("expired_count", Integer, nullable=False, server_default=text("0")),
    # Attempts that ended without any result (the worker vanished); poison past a threshold.
    Column("lost_count", Integer, nullable=False, server_default=text("0")),
    # The effective retry policy (strategy, base_delay_ms, multiplier, max_delay_ms, jitter).
    Column("retry_policy", JSONB),
    Column("schedule_id", UUID(as_uuid=True)),
    Column("batch_id", UUID(as_uuid=True)),
    # When the broker confirmed the current attempt's ready message (the reconciler's clock;
    # NULL while the dispatch waits in the outbox) and when the running attempt must end.
    Column("queued_at", DateTime(timezone=True)),
    Column("deadline_at", DateTime(timezone=True)),
    Column("cancel_requested_at", DateTime(timezone=True)),
    Column("cancel_requested_by", Text),
    Column("trace_id", Text),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    # A batch member's ref (its children in the batch read its result by it) and whether the
    # job has parents, whose results its dispatches carry (migration 0023, docs/sdk.md).
    Column("ref", Text),
    Column("has_parents", Boolean, nullable=False, server_default=text("false")),
    CheckConstraint(f"status IN ({_STATUSES})", name="jobs_status_valid"),
    CheckConstraint("priority BETWEEN 1 AND 3", name="jobs_priority_range"),
)
Index("ix_jobs_scheduled_due", jobs.c.run_at, postgresql_where=text("status = 'scheduled'"))
Index("ix_jobs_running_lease", jobs.c.lease_expires_at, postgresql_where=text("status = 'running'"))
Index("ix_jobs_owner_created", jobs.c.submitted_by, jobs.c.created_at)
Index("ix_jobs_project_created", jobs.c.project_id, jobs.c.created_at)
Index("ix_jobs_created", jobs.c.created_at)
Index("ix_jobs_running_deadline", jobs.c.deadline_at, postgresql_where=text("status = 'running'"))
Index("ix_jobs_queued_since", jobs.c.queued_at, postgresql_where=text("status = 'queued'"))
Index("ix_jobs_waiting", jobs.c.type, postgresql_where=text("waiting_reason IS NOT NULL"))
Index("ix_jobs_blocked", jobs.c.created_at, postgresql_where=text("status = 'blocked'"))
# A queue's unfinished jobs (its depth by state and priority, and whether it may be deleted;
# migration 0016, priority since 0020): its counts are index-only scans.
Index(
    "ix_jobs_queue_unfinished",
    jobs.c.project_id,
    jobs.c.queue,
    jobs.c.status,
    jobs.c.priority,
    postgresql_where=text("status NOT IN ('succeeded', 'dead', 'cancelled')"),
)
Index(
    "ix_jobs_schedule",
    jobs.c.schedule_id,
    jobs.c.created_at,
    postgresql_where=text("schedule_id IS NOT NULL"),
)
Index("ix_jobs_batch", jobs.c.batch_id, postgresql_where=text("batch_id IS NOT NULL"))
Index("ix_jobs_status_created", jobs.c.status, jobs.c.created_at)
Index("ix_jobs_type_created", jobs.c.type, jobs.c.created_at)
# The listing's other orders (the dashboard's keyset pages, migration 0009).
Index("ix_jobs_priority_created", jobs.c.priority, jobs.c.created_at)
Index("ix_jobs_updated", jobs.c.updated_at)
# The jobs list's payload search (migration 0026): payload @> '{"field": value}' (the
# dashboard's adapters/job_search.py).
Index(
    "ix_jobs_payload",
    jobs.c.payload,
    postgresql_using="gin",
    postgresql_ops={"payload": "jsonb_path_ops"},
)
# The retention pruner's (the scheduler's adapters/retention.py): finished jobs, oldest first.
Index(
    "ix_jobs_finished",
    jobs.c.status,
    jobs.c.finished_at,
    postgresql_where=text("status IN ('succeeded', 'cancelled', 'dead')"),
)

job_attempts = Table(
    "job_attempts",
    metadata,
    Column(
        "job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("attempt", Integer, primary_key=True),
    Column("status", Text, nullable=False),
    Column("worker_id", Text),
    Column("dispatched_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Column("duration_ms", BigInteger),
    Column("error_class", Text),
    Column("error", Text),
)

job_events = Table(
    "job_events",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("from_status", Text),
    Column("to_status", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)
Index("ix_job_events_job", job_events.c.job_id, job_events.c.id)

outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("exchange", Text, nullable=False, server_default=text("'jobs.exchange'")),
    Column("routing_key", Text, nullable=False),
    # The job a dispatch is for: the relay stamps jobs.queued_at once the broker confirmed it.
    Column("job_id", UUID(as_uuid=True)),
    Column("message_id", UUID(as_uuid=True), nullable=False),
    Column("message_type", Text, nullable=False),
    Column("trace_id", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    # A ready dispatch's project and queue: the relay holds it here while the queue is paused.
    Column("project_id", UUID(as_uuid=True)),
    Column("queue", Text),
)

# The outbox rows a relay pass is publishing (the scheduler's outbox_relay.py): committed
# before the publishes, deleted with the rows the broker confirmed. One left behind names
# rows its dead pass may have published.
outbox_passes = Table(
    "outbox_passes",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("ids", ARRAY(BigInteger), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    # Until when the first copies of its ready dispatches run unasked (FRESH_HEADER).
    Column("fresh_until", DateTime(timezone=True)),
)

dead_letters = Table(
    "dead_letters",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("last_error", Text),
    Column("last_error_class", Text),
    Column("payload_snapshot", JSONB, nullable=False),
    # Error class and message with ids and numbers masked: groups alike failures.
    Column("fingerprint", Text, nullable=False, server_default=text("''")),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("resolved_at", DateTime(timezone=True)),
    Column("resolved_by", Text),
    Column("resolution", Text),
)
Index("ix_dead_letters_job", dead_letters.c.job_id)
Index(
    "ix_dead_letters_open", dead_letters.c.created_at, postgresql_where=text("resolved_at IS NULL")
)
Index(
    "ix_dead_letters_resolved",
    dead_letters.c.created_at,
    dead_letters.c.id,
    postgresql_where=text("resolved_at IS NOT NULL"),
)
Index("ix_dead_letters_fingerprint", dead_letters.c.fingerprint, dead_letters.c.created_at)

# Who did what to dead letters, when and why (requeue, discard, bulk actions).
dead_letter_actions = Table(
    "dead_letter_actions",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("action", Text, nullable=False),
    Column("actor", Text, nullable=False),
    Column("reason", Text),
    Column("dead_letter_id", UUID(as_uuid=True)),
    Column("job_id", UUID(as_uuid=True)),
    Column("selector", JSONB),
    Column("affected", Integer, nullable=False, server_default=text("0")),
    Column("at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)
Index("ix_dead_letter_actions_at", dead_letter_actions.c.at)

job_dependencies = Table(
    "job_dependencies",
    metadata,
    Column(
        "job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True
    ),
    # No foreign key: a parent may be recorded after its child (messages can overtake).
    Column("depends_on", UUID(as_uuid=True), primary_key=True),
)
Index("ix_job_dependencies_parent", job_dependencies.c.depends_on)

batches = Table(
    "batches",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("submitted_by", Text, nullable=False),
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("total", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)
Index("ix_batches_created", batches.c.created_at)
Index("ix_batches_owner_created", batches.c.submitted_by, batches.c.created_at)
Index("ix_batches_project_created", batches.c.project_id, batches.c.created_at)

schedules = Table(
    "schedules",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", Text, nullable=False),
    Column("cron", Text, nullable=False),
    Column("timezone", Text, nullable=False),
    # {type, priority, payload, maxAttempts, timeoutSeconds, retryPolicy}
    Column("job_template", JSONB, nullable=False),
    Column("owner", Text, nullable=False),
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("paused", Boolean, nullable=False, server_default=text("false")),
    Column("next_fire_at", DateTime(timezone=True)),
    Column("last_fire_at", DateTime(timezone=True)),
    Column("last_job_id", UUID(as_uuid=True)),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    # Declared by a handler (docs/sdk.md, "Schedules in code"): its module, and when code last
    # created or changed the schedule; both null for one made through the API (0022).
    Column("declared_in", Text),
    Column("declared_at", DateTime(timezone=True)),
)
Index("ix_schedules_due", schedules.c.next_fire_at, postgresql_where=text("NOT paused"))
Index("ix_schedules_owner", schedules.c.owner)
Index("ix_schedules_last_job", schedules.c.last_job_id)
Index("ix_schedules_project_name", schedules.c.project_id, schedules.c.name, unique=True)

# A project's queues (docs/flow-control.md): the limits, the pause switch and the defaults of
# the jobs a project sends to one named queue (the broker lane ``jobs.ready.<name>.*``, shared
# by every project's queue of that name). Created with no limits when a project's first job
# names it (migration 0016).
queues = Table(
    "queues",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("name", Text, nullable=False),
    Column("max_concurrency", Integer),
    Column("rate_limit", Integer),
    Column("rate_per_seconds", Integer),
    # The rate limit's token bucket, shared by every relay (under the row's lock): the tokens
    # left when last refilled (NULL: full).
    Column("rate_tokens", Float),
    Column("rate_refilled_at", DateTime(timezone=True)),
    Column("concurrency_key", Text),
    Column("concurrency_key_limit", Integer),
    Column("paused", Boolean, nullable=False, server_default=text("false")),
    Column("paused_at", DateTime(timezone=True)),
    Column("paused_by", Text),
    Column("default_priority", SmallInteger),
    Column("default_timeout_seconds", Integer),
    Column("default_retry_policy", Text),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    CheckConstraint("max_concurrency IS NULL OR max_concurrency >= 1", name="queues_limit_valid"),
    CheckConstraint(
        "(rate_limit IS NULL) = (rate_per_seconds IS NULL) AND (rate_limit IS NULL OR "
        "(rate_limit >= 1 AND rate_per_seconds IN (1, 60)))",
        name="queues_rate_valid",
    ),
    CheckConstraint(
        "(concurrency_key IS NULL) = (concurrency_key_limit IS NULL) AND "
        "(concurrency_key_limit IS NULL OR concurrency_key_limit >= 1)",
        name="queues_key_valid",
    ),
    CheckConstraint(
        "default_priority IS NULL OR default_priority BETWEEN 1 AND 3",
        name="queues_priority_valid",
    ),
)
Index("ix_queues_project_name", queues.c.project_id, queues.c.name, unique=True)
# The relay's pause gate looks up the paused ones only; its flow control the limited ones.
Index("ix_queues_paused", queues.c.project_id, queues.c.name, postgresql_where=text("paused"))
Index(
    "ix_queues_limited",
    queues.c.project_id,
    queues.c.name,
    postgresql_where=text("max_concurrency IS NOT NULL OR rate_limit IS NOT NULL"),
)

# A project's weight in fair dispatch (the relay serves projects with work waiting in turn,
# each ``weight`` dispatches a round) and its quotas, checked at submission (null: none;
# migration 0018); docs/flow-control.md. A project without a row weighs 1 and has no quota.
project_flow = Table(
    "project_flow",
    metadata,
    Column("project_id", UUID(as_uuid=True), primary_key=True),
    Column("weight", Integer, nullable=False, server_default=text("1")),
    Column("updated_by", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("max_waiting", Integer, nullable=True),
    Column("max_submitted_per_day", Integer, nullable=True),
    Column("max_running", Integer, nullable=True),
    CheckConstraint("weight BETWEEN 1 AND 100", name="project_flow_weight_valid"),
    CheckConstraint(
        "max_waiting IS NULL OR max_waiting >= 1", name="project_flow_max_waiting_valid"
    ),
    CheckConstraint(
        "max_submitted_per_day IS NULL OR max_submitted_per_day >= 1",
        name="project_flow_max_submitted_per_day_valid",
    ),
    CheckConstraint(
        "max_running IS NULL OR max_running >= 1", name="project_flow_max_running_valid"
    ),
)

# A project's usage per UTC day (docs/flow-control.md, "Usage"): what the scheduler's
# transactions did, appended as deltas (no row shared by concurrent transactions) and folded
# into project_usage by the usage sweep. Retention never touches them: usage outlives the jobs.
USAGE_MEASURES = ("submitted", "attempts", "run_seconds", "succeeded", "dead")


def _usage_measures(count: type[Integer] | type[BigInteger]) -> list[Column[Any]]:
    return [
        Column(measure, Float if measure == "run_seconds" else count, nullable=False)
        for measure in USAGE_MEASURES
    ]


usage_deltas = Table(
    "usage_deltas",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("day", Date, nullable=False),
    *_usage_measures(Integer),
)
project_usage = Table(
    "project_usage",
    metadata,
    Column("project_id", UUID(as_uuid=True), primary_key=True),
    Column("day", Date, primary_key=True),
    *_usage_measures(BigInteger),
)

# Each queue's jobs waiting and running, sampled once a minute by the scheduler's queue
# samples sweep (migration 0020; docs/flow-control.md, "Depth and the last hour"): a row per
# (project, queue, minute) with unfinished jobs, and per minute sampled a row in
# queue_sample_minutes, so a reader tells a minute with nothing unfinished (zeros) from one
# nobody sampled (no scheduler running). Kept a day.
queue_samples = Table(
    "queue_samples",
    metadata,
    Column("project_id", UUID(as_uuid=True), primary_key=True),
    Column("queue", Text, primary_key=True),
    Column("minute", DateTime(timezone=True), primary_key=True),
    Column("waiting", Integer, nullable=False),
    Column("running", Integer, nullable=False),
)
Index("ix_queue_samples_minute", queue_samples.c.minute)
queue_sample_minutes = Table(
    "queue_sample_minutes",
    metadata,
    Column("minute", DateTime(timezone=True), primary_key=True),
    # the live workers' figures of the minute (migration 0027; null before it)
    Column("workers", Integer),
    Column("busy_slots", Integer),
    Column("slots", Integer),
)


def _chart_figures(total: type[Integer]) -> list[Column[Any]]:
    return [
        Column("waiting", total, nullable=False),
        Column("running", total, nullable=False),
        Column("oldest_wait_seconds", Float, nullable=False),
        Column("succeeded", total, nullable=False),
        Column("dead", total, nullable=False),
        Column("cancelled", total, nullable=False),
    ]


# The console's charts (migration 0027; docs/dashboard.md, "Charts"): per (minute, project,
# queue, priority) the depth, running jobs and longest wait sampled, and the jobs finished in
# the minute; per hour the same summed (depths over the hour's sampled minutes, counted in
# queue_sample_hours with the workers' sums). Written by the queue samples sweep.
# Beside each queue's rows, each project's totals (queue CHART_ALL_QUEUES, a name no queue can
# have) and the platform's (project CHART_PLATFORM too), so a chart's read costs its points x
# priorities whatever the number of queues.
CHART_ALL_QUEUES = "*"
CHART_PLATFORM = "00000000-0000-0000-0000-000000000000"
queue_minutes = Table(
    "queue_minutes",
    metadata,
    Column("minute", DateTime(timezone=True), nullable=False),
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("queue", Text, nullable=False),
    Column("priority", SmallInteger, nullable=False),
    *_chart_figures(Integer),
    # queue first: a chart reads one queue's (or the totals') rows over a time range
    PrimaryKeyConstraint("project_id", "queue", "minute", "priority"),
)
Index("ix_queue_minutes_minute", queue_minutes.c.minute)
queue_hours = Table(
    "queue_hours",
    metadata,
    Column("hour", DateTime(timezone=True), nullable=False),
    Column("project_id", UUID(as_uuid=True), nullable=False),
    Column("queue", Text, nullable=False),
    Column("priority", SmallInteger, nullable=False),
    *_chart_figures(BigInteger),
    PrimaryKeyConstraint("project_id", "queue", "hour", "priority"),
)
Index("ix_queue_hours_hour", queue_hours.c.hour)
queue_sample_hours = Table(
    "queue_sample_hours",
    metadata,
    Column("hour", DateTime(timezone=True), primary_key=True),
    Column("minutes", Integer, nullable=False),
    Column("worker_minutes", Integer, nullable=False),
    Column("workers", BigInteger, nullable=False),
    Column("busy_slots", BigInteger, nullable=False),
    Column("slots", BigInteger, nullable=False),
)

# One row per fire time: the unique key makes each fire time create exactly one job.
schedule_fires = Table(
    "schedule_fires",
    metadata,
    Column(
        "schedule_id",
        UUID(as_uuid=True),
        ForeignKey("schedules.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("fire_time", DateTime(timezone=True), primary_key=True),
    Column("job_id", UUID(as_uuid=True), nullable=False),
    Column("fired_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)
Index("ix_schedule_fires_time", schedule_fires.c.fire_time)

retry_policies = Table(
    "retry_policies",
    metadata,
    Column("name", Text, nullable=False),
    # NULL: shared by every project (policies stored before projects; migration 0015).
    Column("project_id", UUID(as_uuid=True)),
    Column("strategy", Text, nullable=False),
    Column("base_delay_ms", BigInteger, nullable=False),
    Column("multiplier", Float, nullable=False),
    Column("max_delay_ms", BigInteger, nullable=False),
    Column("jitter", Boolean, nullable=False),
    Column("max_attempts", Integer),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    CheckConstraint("strategy IN ('fixed', 'linear', 'exponential')", name="retry_strategy_valid"),
)
Index(
    "ix_retry_policies_project_name",
    retry_policies.c.project_id,
    retry_policies.c.name,
    unique=True,
    postgresql_nulls_not_distinct=True,
)

workers = Table(
    "workers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("hostname", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("version", Text, nullable=False),
    Column("queues", JSONB, nullable=False),
    Column("concurrency", Integer, nullable=False),
    Column("active_jobs", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("last_heartbeat_at", DateTime(timezone=True), nullable=False),
    Column("stopping", Boolean, nullable=False, server_default=text("false")),
    # The job types the worker serves (its latest heartbeat; empty: a worker that predates it).
    Column("types", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
    # An admin's quiet or stop took effect (takes no new job), and the attempts the process
    # ran and those that failed, as its latest heartbeat reported them (docs/worker.md).
    Column("quiet", Boolean, nullable=False, server_default=text("false")),
    Column("processed", BigInteger, nullable=False, server_default=text("0")),
    Column("failed", BigInteger, nullable=False, server_default=text("0")),
)
Index("ix_workers_heartbeat", workers.c.last_heartbeat_at)

# How far each scheduler replica has read each queue it consumes: the send time of the latest
# ReadTick it applied there (every message published before it is applied). The reaper judges
# leases against the smallest horizon of the live replicas, never against the wall clock.
read_horizons = Table(
    "read_horizons",
    metadata,
    Column("replica_id", Text, primary_key=True),
    Column("queue", Text, primary_key=True),
    Column("horizon", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)

job_logs = Table(
    "job_logs",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("job_id", UUID(as_uuid=True), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("worker_id", Text, nullable=False),
    Column("level", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("message_id", UUID(as_uuid=True), nullable=False, unique=True),
)
Index("ix_job_logs_job", job_logs.c.job_id, job_logs.c.id)

# Message ids of commands already applied (retry requests...), written in the same
# transaction as their effect so a redelivered command changes nothing.
inbox = Table(
    "inbox",
    metadata,
    Column("message_id", UUID(as_uuid=True), primary_key=True),
    Column("queue", Text, nullable=False),
    Column("received_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)
Index("ix_inbox_received", inbox.c.received_at)

poison_messages = Table(
    "poison_messages",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("queue", Text, nullable=False),
    Column("message_id", Text),
    Column("reason", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("headers", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("received_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)
Index("ix_poison_messages_received", poison_messages.c.received_at)

# Rollups (migrations 0009, 0014): the jobs table counted as it changes, in three families,
# each a delta table the triggers on ``jobs`` append to and rollup tables per time grain the
# scheduler folds the deltas into (its adapters/rollups.py); readers add the deltas not folded
# yet, so rollups plus deltas equal a count of ``jobs`` in the same snapshot. Every key starts
# with the project, so a figure can be limited to a caller's projects (indexed (project_id,
# bucket)); one submitter's figures are counted from ``jobs`` (ix_jobs_owner_created).
# - counts: jobs by created time, project, type, priority and status;
# - runtimes: succeeded jobs with both times, by created time, project and runtime bucket
#   (0 under 1 ms; k >= 1 for [1.1**(k-1), 1.1**k) ms): how many, and their sum;
# - finishes: jobs by finished time (minute) and project.
ROLLUP_FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    # family: (key columns after the time bucket, measures, grains)
    "counts": (
        ("project_id", "type", "priority", "status"),
        ("jobs",),
        ("minute", "hour", "day"),
    ),
    "runtimes": (
        ("project_id", "runtime_bucket"),
        ("jobs", "runtime_ms"),
        ("minute", "hour", "day"),
    ),
    "finishes": (("project_id",), ("jobs",), ("minute",)),
}
_ROLLUP_TYPES: dict[str, Any] = {
    "project_id": Uuid,
    "type": Text,
    "priority": SmallInteger,
    "status": Text,
    "runtime_bucket": SmallInteger,
    "jobs": BigInteger,
    "runtime_ms": Float,
}


def _rollup_table(
    name: str, key: tuple[str, ...], measures: tuple[str, ...], *, delta: bool
) -> Table:
    in_key = not delta
    return Table(
        name,
        metadata,
        *([Column("id", BigInteger, primary_key=True, autoincrement=True)] if delta else []),
        Column("bucket", DateTime(timezone=True), primary_key=in_key, nullable=False),
        *(Column(c, _ROLLUP_TYPES[c], primary_key=in_key, nullable=False) for c in key),
        *(Column(m, _ROLLUP_TYPES[m], nullable=False) for m in measures),
    )


ROLLUPS: dict[str, dict[str, Table]] = {}
for _family, (_key, _measures, _grains) in ROLLUP_FAMILIES.items():
    ROLLUPS[_family] = {
        "delta": _rollup_table(f"job_{_family}_deltas", _key, _measures, delta=True)
    }
    for _grain in _grains:
        _table = _rollup_table(f"job_{_family}_{_grain}", _key, _measures, delta=False)
        Index(f"ix_job_{_family}_{_grain}_project", _table.c.project_id, _table.c.bucket)
        ROLLUPS[_family][_grain] = _table
