"""Each job carries the named queue of its type (the job type registry's): dispatched to
jobs.ready.<queue>.<priority>, "default" being the three shared ready queues.

Revision ID: 0006
Revises: 0005
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "jobs",
        sa.Column("queue", sa.Text(), server_default=sa.text("'default'"), nullable=False),
    )


def downgrade() -> None:
    op.drop_column("jobs", "queue")
