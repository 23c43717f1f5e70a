"""A project's quotas beside its weight (docs/flow-control.md, "Quotas"): ``project_flow``
gains ``max_waiting`` and ``max_submitted_per_day``, null (no quota) for every row there is.

Revision ID: 0018
Revises: 0017
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("project_flow", sa.Column("max_waiting", sa.Integer(), nullable=True))
    op.add_column("project_flow", sa.Column("max_submitted_per_day", sa.Integer(), nullable=True))
    op.create_check_constraint(
        "project_flow_max_waiting_valid", "project_flow", "max_waiting IS NULL OR max_waiting >= 1"
    )
    op.create_check_constraint(
        "project_flow_max_submitted_per_day_valid",
        "project_flow",
        "max_submitted_per_day IS NULL OR max_submitted_per_day >= 1",
    )


def downgrade() -> None:
    op.drop_column("project_flow", "max_submitted_per_day")
    op.drop_column("project_flow", "max_waiting")
