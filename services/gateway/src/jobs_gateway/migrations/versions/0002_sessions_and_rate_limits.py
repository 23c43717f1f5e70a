"""refresh-token families and shared rate-limit counters

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "refresh_tokens",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("family_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("replaced_by", sa.Uuid(), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["gateway.users.id"],
            name="refresh_tokens_user_id_fkey",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="refresh_tokens_pkey"),
        schema="gateway",
    )
    op.create_index(
        "refresh_tokens_family_id_idx", "refresh_tokens", ["family_id"], schema="gateway"
    )
    op.create_index("refresh_tokens_user_id_idx", "refresh_tokens", ["user_id"], schema="gateway")
    op.create_index(
        "refresh_tokens_expires_at_idx", "refresh_tokens", ["expires_at"], schema="gateway"
    )
    op.create_table(
        "rate_limit_counters",
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("window_end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("hits", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("scope", "key", "window_start", name="rate_limit_counters_pkey"),
        schema="gateway",
    )
    op.create_index(
        "rate_limit_counters_window_end_idx",
        "rate_limit_counters",
        ["window_end"],
        schema="gateway",
    )


def downgrade() -> None:
    op.drop_table("rate_limit_counters", schema="gateway")
    op.drop_table("refresh_tokens", schema="gateway")
