"""Batches listed newest first, all of them (admins) or one owner's.

Revision ID: 0004
Revises: 0003
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_batches_created", "batches", ["created_at"], unique=False)
    op.create_index(
        "ix_batches_owner_created", "batches", ["submitted_by", "created_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_batches_owner_created", table_name="batches")
    op.drop_index("ix_batches_created", table_name="batches")
