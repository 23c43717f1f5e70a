"""Jobs wait for a worker that serves their type: the types each worker serves (from its
heartbeats) and why a queued job has no ready message.

Revision ID: 0010
Revises: 0009
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "workers",
        sa.Column(
            "types", postgresql.JSONB(), nullable=False, server_default=sa.text("'[]'::jsonb")
        ),
    )
    op.add_column("jobs", sa.Column("waiting_reason", sa.Text(), nullable=True))
    op.create_index(
        "ix_jobs_waiting",
        "jobs",
        ["type"],
        postgresql_where=sa.text("waiting_reason IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_waiting", table_name="jobs")
    op.drop_column("jobs", "waiting_reason")
    op.drop_column("workers", "types")
