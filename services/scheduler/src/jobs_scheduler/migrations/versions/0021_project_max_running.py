"""A project's most jobs in flight across its queues (docs/flow-control.md, "Quotas"):
``project_flow`` gains ``max_running``, null (no limit) for every row there is.

Revision ID: 0021
Revises: 0020
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("project_flow", sa.Column("max_running", sa.Integer(), nullable=True))
    op.create_check_constraint(
        "project_flow_max_running_valid", "project_flow", "max_running IS NULL OR max_running >= 1"
    )


def downgrade() -> None:
    op.drop_column("project_flow", "max_running")
