"""Whether a job waiting for a worker of its type ever had its ready message published: one
that never did goes out as a first delivery when a worker arrives (it runs at once), one that
did as a copy (claimed first: the earlier message may still be somewhere).

Revision ID: 0011
Revises: 0010
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("waiting_unsent", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "waiting_unsent")
