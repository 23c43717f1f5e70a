"""Names unique per project (docs/tenancy.md): a schedule's name within its project (it was
within its owner's), and named retry policies that belong to a project.

Retry policies stored before projects were the platform admin's, named by every user's jobs:
they stay **shared** (``project_id`` NULL), so no job that names one changes behaviour. A
project's admins create policies in their project from now on; a job's ``retryPolicyName``
finds its project's policy first, then a shared one. ``(project_id, name)`` is unique with
NULLs not distinct (one shared policy per name). The owner index stays for the schedule caps,
which count an owner's schedules.

The downgrade keeps one policy per name (a shared one, else the oldest) and refuses nothing:
the earlier release knows policies by name alone.

Revision ID: 0015
Revises: 0014
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_schedules_owner_name", table_name="schedules")
    op.create_index("ix_schedules_owner", "schedules", ["owner"])
    op.drop_index("ix_schedules_project", table_name="schedules")
    op.create_index("ix_schedules_project_name", "schedules", ["project_id", "name"], unique=True)
    op.add_column("retry_policies", sa.Column("project_id", sa.Uuid(), nullable=True))
    op.drop_constraint("retry_policies_pkey", "retry_policies", type_="primary")
    op.create_index(
        "ix_retry_policies_project_name",
        "retry_policies",
        ["project_id", "name"],
        unique=True,
        postgresql_nulls_not_distinct=True,
    )


def downgrade() -> None:
    op.execute(
        "DELETE FROM retry_policies p USING retry_policies q "
        "WHERE p.name = q.name AND (p.project_id, p.created_at, p.ctid) IS DISTINCT FROM "
        "(q.project_id, q.created_at, q.ctid) AND "
        "(q.project_id IS NULL AND p.project_id IS NOT NULL "
        " OR (p.project_id IS NULL) = (q.project_id IS NULL) "
        "    AND (q.created_at, q.ctid) < (p.created_at, p.ctid))"
    )
    op.drop_index("ix_retry_policies_project_name", table_name="retry_policies")
    op.create_primary_key("retry_policies_pkey", "retry_policies", ["name"])
    op.drop_column("retry_policies", "project_id")
    op.drop_index("ix_schedules_project_name", table_name="schedules")
    op.create_index("ix_schedules_project", "schedules", ["project_id"])
    op.drop_index("ix_schedules_owner", table_name="schedules")
    op.create_index("ix_schedules_owner_name", "schedules", ["owner", "name"], unique=True)
