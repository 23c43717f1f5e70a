"""The organization audit log: who changed an organization, its members, projects or keys.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-06 15:10:00.000000
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
    # No foreign keys: a row outlives the project or member it names.
    op.create_table(
        "audit_events",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("details", postgresql.JSONB(), server_default="{}", nullable=False),
        sa.Column(
            "at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        schema="gateway",
    )
    op.create_index(
        "ix_audit_events_organization",
        "audit_events",
        ["organization_id", "id"],
        schema="gateway",
    )


def downgrade() -> None:
    op.drop_index("ix_audit_events_organization", table_name="audit_events", schema="gateway")
    op.drop_table("audit_events", schema="gateway")
