"""Jobs, batches and schedules belong to a project (docs/tenancy.md): each existing row moves
into its owner's personal default project, whose id derives from the owner's email exactly as
the gateway derives it (jobs_common.tenancy), so this store needs none of the gateway's tables.

A row inserted without a project (by a scheduler replica still on the previous release during
a rolling deploy, or a script) gets the same default from a trigger, so the NOT NULL never
refuses an older writer.

Revision ID: 0013
Revises: 0012
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from jobs_common.tenancy import personal_project_id_sql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table -> (owner column, index, its columns)
OWNED = {
    "jobs": ("submitted_by", "ix_jobs_project_created", ["project_id", "created_at"]),
    "batches": ("submitted_by", "ix_batches_project_created", ["project_id", "created_at"]),
    "schedules": ("owner", "ix_schedules_project", ["project_id"]),
}


def upgrade() -> None:
    op.execute(
        "CREATE FUNCTION jobs_personal_project(owner text) RETURNS uuid "
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS "
        f"$$ SELECT {personal_project_id_sql('owner')} $$"
    )
    for table, (owner, index, columns) in OWNED.items():
        op.add_column(table, sa.Column("project_id", sa.Uuid(), nullable=True))
        op.execute(f"UPDATE {table} SET project_id = jobs_personal_project({owner})")
        op.alter_column(table, "project_id", nullable=False)
        op.create_index(index, table, columns)
        op.execute(
            f"CREATE FUNCTION {table}_project_default() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN IF NEW.project_id IS NULL THEN "
            f"NEW.project_id := jobs_personal_project(NEW.{owner}); END IF; RETURN NEW; END $$"
        )
        op.execute(
            f"CREATE TRIGGER {table}_project_default BEFORE INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_project_default()"
        )


def downgrade() -> None:
    for table, (_, index, _) in OWNED.items():
        op.execute(f"DROP TRIGGER {table}_project_default ON {table}")
        op.execute(f"DROP FUNCTION {table}_project_default()")
        op.drop_index(index, table_name=table)
        op.drop_column(table, "project_id")
    op.execute("DROP FUNCTION jobs_personal_project(text)")
