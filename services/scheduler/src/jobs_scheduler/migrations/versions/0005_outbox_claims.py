"""Outbox relay passes: the outbox rows a relay pass is publishing, committed before it
publishes them, so a relay that dies between the broker's confirm and its delete leaves a
record of what it may have published, and no ready message goes out twice.

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox_passes",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("ids", postgresql.ARRAY(sa.BigInteger()), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("outbox_passes")
