"""The jobs list's payload search (docs/api.md, "Searching jobs"): ``ix_jobs_payload`` indexes
``jobs.payload`` with GIN ``jsonb_path_ops`` (one hashed entry per value in the payload,
whatever its size), which answers ``payload @> '{"field": value}'``: the jobs whose top-level
``field`` equals ``value``. The id prefix search needs no index of its own: it is a range of
the primary key.

Measured before choosing it (scripts/bench_search.py, docs/performance.md): an index over an
expression keeping only the top-level fields costs a SQL function call on every insert and
on every row the planner filters, tens of times the native operator's cost.

if_not_exists: an operator may have built it CONCURRENTLY first (docs/performance.md,
"Searching jobs": the build time at a million jobs).

Revision ID: 0026
Revises: 0024
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0026"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_jobs_payload",
        "jobs",
        ["payload"],
        postgresql_using="gin",
        postgresql_ops={"payload": "jsonb_path_ops"},
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_payload", table_name="jobs")
