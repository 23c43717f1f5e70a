"""Schedules declared in code (docs/sdk.md, "Schedules in code"): ``schedules`` gains
``declared_in`` (the module of the handler that declares it; null for a schedule made
through the API) and ``declared_at`` (when code last created or changed it). Names are
already unique per project (``ix_schedules_project_name``, 0015), which the upsert by name
relies on.

Revision ID: 0022
Revises: 0021
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("schedules", sa.Column("declared_in", sa.Text(), nullable=True))
    op.add_column("schedules", sa.Column("declared_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("schedules", "declared_at")
    op.drop_column("schedules", "declared_in")
