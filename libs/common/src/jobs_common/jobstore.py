"""The PostgreSQL job store schema, shared by the scheduler (writer, owns the migrations) and
the dashboard (reader). Migrations live in services/scheduler; a test checks they match."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

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
    Column("status", Text, nullable=False),
    Column("attempt", Integer, nullable=False, server_default=text("0")),
    Column("max_attempts", Integer, nullable=False),
    # The attempt number at which the job is out of attempts; a manual retry raises it.
    Column("attempt_limit", Integer, nullable=False),
    Column("timeout_seconds", Integer, nullable=False),
    Column("run_at", DateTime(timezone=True)),
    Column("lease_expires_at", DateTime(timezone=True)),
    Column("worker_id", Text),
    Column("last_error", Text),
    Column("last_error_class", Text),
    Column("result", JSONB),
    Column("expired_count", Integer, nullable=False, server_default=text("0")),
    Column("trace_id", Text),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    CheckConstraint(f"status IN ({_STATUSES})", name="jobs_status_valid"),
    CheckConstraint("priority BETWEEN 1 AND 3", name="jobs_priority_range"),
)
Index("ix_jobs_scheduled_due", jobs.c.run_at, postgresql_where=text("status = 'scheduled'"))
Index("ix_jobs_running_lease", jobs.c.lease_expires_at, postgresql_where=text("status = 'running'"))
Index("ix_jobs_owner_created", jobs.c.submitted_by, jobs.c.created_at)
Index("ix_jobs_created", jobs.c.created_at)
Index("ix_jobs_status_created", jobs.c.status, jobs.c.created_at)
Index("ix_jobs_type_created", jobs.c.type, jobs.c.created_at)

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
    Column("routing_key", Text, nullable=False),
    Column("message_id", UUID(as_uuid=True), nullable=False),
    Column("message_type", Text, nullable=False),
    Column("trace_id", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
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
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
    Column("resolved_at", DateTime(timezone=True)),
    Column("resolution", Text),
)
Index("ix_dead_letters_job", dead_letters.c.job_id)
Index(
    "ix_dead_letters_open", dead_letters.c.created_at, postgresql_where=text("resolved_at IS NULL")
)

# Message ids of commands already applied (retry requests...), written in the same
# transaction as their effect so a redelivered command changes nothing.
inbox = Table(
    "inbox",
    metadata,
    Column("message_id", UUID(as_uuid=True), primary_key=True),
    Column("queue", Text, nullable=False),
    Column("received_at", DateTime(timezone=True), nullable=False, server_default=_NOW),
)

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
