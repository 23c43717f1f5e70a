"""Retention: the indexes the pruner finds its rows by (docs/operations.md, "Retention").

Revision ID: 0008
Revises: 0007
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FINISHED = sa.text("status IN ('succeeded', 'cancelled', 'dead')")


def upgrade() -> None:
    # if_not_exists: an operator may have built it CONCURRENTLY first (docs/operations.md).
    op.create_index(
        "ix_jobs_finished",
        "jobs",
        ["status", "finished_at"],
        postgresql_where=FINISHED,
        if_not_exists=True,
    )
    op.create_index("ix_schedules_last_job", "schedules", ["last_job_id"])
    op.create_index("ix_schedule_fires_time", "schedule_fires", ["fire_time"])
    op.create_index("ix_inbox_received", "inbox", ["received_at"])
    op.create_index("ix_poison_messages_received", "poison_messages", ["received_at"])


def downgrade() -> None:
    op.drop_index("ix_poison_messages_received", table_name="poison_messages")
    op.drop_index("ix_inbox_received", table_name="inbox")
    op.drop_index("ix_schedule_fires_time", table_name="schedule_fires")
    op.drop_index("ix_schedules_last_job", table_name="schedules")
    op.drop_index("ix_jobs_finished", table_name="jobs")
