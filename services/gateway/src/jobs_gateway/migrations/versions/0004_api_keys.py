"""Project API keys (the SHA-256 of each key, never the key).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06 10:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("prefix", sa.Text(), nullable=False),
        sa.Column("secret_hash", sa.Text(), nullable=False),
        sa.Column("created_by", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_by", sa.Text(), nullable=True),
        sa.CheckConstraint("role IN ('member', 'viewer')", name="api_keys_role_check"),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["gateway.projects.id"],
            name="api_keys_project_id_fkey",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="api_keys_pkey"),
        sa.UniqueConstraint("prefix", name="api_keys_prefix_key"),
        schema="gateway",
    )
    op.create_index("api_keys_project_id_idx", "api_keys", ["project_id"], schema="gateway")


def downgrade() -> None:
    op.drop_index("api_keys_project_id_idx", table_name="api_keys", schema="gateway")
    op.drop_table("api_keys", schema="gateway")
