"""Worker control and counts (docs/worker.md, "Quiet and stop"): ``workers`` gains ``quiet``
(an admin's quiet or stop took effect: the worker takes no new job) and ``processed`` /
``failed`` (the attempts the process ran, and those that failed, as its latest heartbeat
reported them).

Revision ID: 0024
Revises: 0023
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "workers",
        sa.Column("quiet", sa.Boolean(), nullable=False, server_default=sa.text("false")),
    )
    op.add_column(
        "workers",
        sa.Column("processed", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    )
    op.add_column(
        "workers",
        sa.Column("failed", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
    )


def downgrade() -> None:
    op.drop_column("workers", "failed")
    op.drop_column("workers", "processed")
    op.drop_column("workers", "quiet")
