"""A queue's depth by state and priority and its last hour (docs/flow-control.md, "Depth and
the last hour"): the unfinished jobs' index ``ix_jobs_queue_unfinished`` gains ``priority``,
so a queue's counts by status and priority stay index-only scans; ``queue_samples`` holds each
queue's jobs waiting and running once a minute (a row per queue with unfinished jobs) and
``queue_sample_minutes`` the minutes sampled, written by the scheduler's queue samples sweep
and kept a day. The history starts with this release: nothing is sampled backwards.

Revision ID: 0020
Revises: 0019
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNFINISHED = sa.text("status NOT IN ('succeeded', 'dead', 'cancelled')")
_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.drop_index("ix_jobs_queue_unfinished", table_name="jobs")
    op.create_index(
        "ix_jobs_queue_unfinished",
        "jobs",
        ["project_id", "queue", "status", "priority"],
        postgresql_where=_UNFINISHED,
    )
    op.create_table(
        "queue_samples",
        sa.Column("project_id", sa.Uuid(), primary_key=True),
        sa.Column("queue", sa.Text(), primary_key=True),
        sa.Column("minute", _TZ, primary_key=True),
        sa.Column("waiting", sa.Integer(), nullable=False),
        sa.Column("running", sa.Integer(), nullable=False),
    )
    op.create_index("ix_queue_samples_minute", "queue_samples", ["minute"])
    op.create_table("queue_sample_minutes", sa.Column("minute", _TZ, primary_key=True))


def downgrade() -> None:
    op.drop_table("queue_sample_minutes")
    op.drop_index("ix_queue_samples_minute", table_name="queue_samples")
    op.drop_table("queue_samples")
    op.drop_index("ix_jobs_queue_unfinished", table_name="jobs")
    op.create_index(
        "ix_jobs_queue_unfinished",
        "jobs",
        ["project_id", "queue", "status"],
        postgresql_where=_UNFINISHED,
    )
