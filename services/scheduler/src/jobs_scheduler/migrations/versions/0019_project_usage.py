"""A project's usage per UTC day (docs/flow-control.md, "Usage"): ``usage_deltas``, appended
by the scheduler's transactions, and ``project_usage``, what the usage sweep folded them into.
Usage starts with this release: nothing is recounted from earlier jobs.

Revision ID: 0019
Revises: 0018
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "usage_deltas",
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("submitted", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("run_seconds", sa.Float(), nullable=False),
        sa.Column("succeeded", sa.Integer(), nullable=False),
        sa.Column("dead", sa.Integer(), nullable=False),
    )
    op.create_table(
        "project_usage",
        sa.Column("project_id", sa.Uuid(), primary_key=True),
        sa.Column("day", sa.Date(), primary_key=True),
        sa.Column("submitted", sa.BigInteger(), nullable=False),
        sa.Column("attempts", sa.BigInteger(), nullable=False),
        sa.Column("run_seconds", sa.Float(), nullable=False),
        sa.Column("succeeded", sa.BigInteger(), nullable=False),
        sa.Column("dead", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("project_usage")
    op.drop_table("usage_deltas")
