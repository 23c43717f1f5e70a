"""Results along a DAG (docs/sdk.md, "Parent results"): ``jobs`` gains ``ref`` (a batch
member's ``ref``, by which its children in the batch read its result; null otherwise) and
``has_parents`` (the job was submitted with ``dependsOn``: its dispatches carry its parents'
results, so a job without parents costs no lookup). Jobs recorded before with parents are
marked from ``job_dependencies``.

Revision ID: 0023
Revises: 0022
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("ref", sa.Text(), nullable=True))
    op.add_column(
        "jobs",
        sa.Column("has_parents", sa.Boolean(), nullable=False, server_default=sa.text("false")),
    )
    op.execute(
        "UPDATE jobs SET has_parents = true "
        "WHERE id IN (SELECT DISTINCT job_id FROM job_dependencies)"
    )


def downgrade() -> None:
    op.drop_column("jobs", "has_parents")
    op.drop_column("jobs", "ref")
