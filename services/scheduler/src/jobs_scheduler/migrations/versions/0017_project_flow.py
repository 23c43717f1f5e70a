"""A project's share of the workers in fair dispatch (docs/flow-control.md, "Fair
dispatch"): ``project_flow`` holds the weight of each project that was given one; a project
without a row weighs 1.

Revision ID: 0017
Revises: 0016
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "project_flow",
        sa.Column("project_id", sa.Uuid(), primary_key=True),
        sa.Column("weight", sa.Integer(), nullable=False, server_default=sa.text("1")),
        sa.Column("updated_by", sa.Text(), nullable=False),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.CheckConstraint("weight BETWEEN 1 AND 100", name="project_flow_weight_valid"),
    )


def downgrade() -> None:
    op.drop_table("project_flow")
