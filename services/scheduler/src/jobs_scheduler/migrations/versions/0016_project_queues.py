"""A project's queues (docs/flow-control.md): ``queues`` holds each project's queue with its
limits, pause switch and defaults; ``outbox`` rows of ready dispatches name their project and
queue, so the relay holds those of a paused queue; an index finds a queue's unfinished jobs.

Every (project, queue) pair that has jobs gets its queue row, with no limits, as the first
job naming it would create it: nothing changes for existing work.

Revision ID: 0016
Revises: 0015
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "queues",
        sa.Column("id", sa.Uuid(), primary_key=True),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("max_concurrency", sa.Integer()),
        sa.Column("rate_limit", sa.Integer()),
        sa.Column("rate_per_seconds", sa.Integer()),
        sa.Column("rate_tokens", sa.Float()),
        sa.Column("rate_refilled_at", _TZ),
        sa.Column("concurrency_key", sa.Text()),
        sa.Column("concurrency_key_limit", sa.Integer()),
        sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.text("false")),
        sa.Column("paused_at", _TZ),
        sa.Column("paused_by", sa.Text()),
        sa.Column("default_priority", sa.SmallInteger()),
        sa.Column("default_timeout_seconds", sa.Integer()),
        sa.Column("default_retry_policy", sa.Text()),
        sa.Column("created_by", sa.Text(), nullable=False),
        sa.Column("created_at", _TZ, nullable=False, server_default=sa.text("now()")),
        sa.Column("updated_at", _TZ, nullable=False, server_default=sa.text("now()")),
        sa.CheckConstraint(
            "max_concurrency IS NULL OR max_concurrency >= 1", name="queues_limit_valid"
        ),
        sa.CheckConstraint(
            "(rate_limit IS NULL) = (rate_per_seconds IS NULL) AND (rate_limit IS NULL OR "
            "(rate_limit >= 1 AND rate_per_seconds IN (1, 60)))",
            name="queues_rate_valid",
        ),
        sa.CheckConstraint(
            "(concurrency_key IS NULL) = (concurrency_key_limit IS NULL) AND "
            "(concurrency_key_limit IS NULL OR concurrency_key_limit >= 1)",
            name="queues_key_valid",
        ),
        sa.CheckConstraint(
            "default_priority IS NULL OR default_priority BETWEEN 1 AND 3",
            name="queues_priority_valid",
        ),
    )
    op.create_index("ix_queues_project_name", "queues", ["project_id", "name"], unique=True)
    op.create_index(
        "ix_queues_paused", "queues", ["project_id", "name"], postgresql_where=sa.text("paused")
    )
    op.create_index(
        "ix_queues_limited",
        "queues",
        ["project_id", "name"],
        postgresql_where=sa.text("max_concurrency IS NOT NULL OR rate_limit IS NOT NULL"),
    )
    op.add_column("outbox", sa.Column("project_id", sa.Uuid()))
    op.add_column("outbox", sa.Column("queue", sa.Text()))
    op.create_index(
        "ix_jobs_queue_unfinished",
        "jobs",
        ["project_id", "queue", "status"],
        postgresql_where=sa.text("status NOT IN ('succeeded', 'dead', 'cancelled')"),
    )
    # Every queue that has jobs, as its first job would have created it.
    op.execute(
        "INSERT INTO queues (id, project_id, name, created_by, created_at, updated_at) "
        "SELECT gen_random_uuid(), project_id, queue, 'migration 0016', min(created_at), now() "
        "FROM jobs GROUP BY project_id, queue "
        "ON CONFLICT (project_id, name) DO NOTHING"
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_queue_unfinished", table_name="jobs")
    op.drop_column("outbox", "queue")
    op.drop_column("outbox", "project_id")
    op.drop_index("ix_queues_limited", table_name="queues")
    op.drop_index("ix_queues_paused", table_name="queues")
    op.drop_index("ix_queues_project_name", table_name="queues")
    op.drop_table("queues")
