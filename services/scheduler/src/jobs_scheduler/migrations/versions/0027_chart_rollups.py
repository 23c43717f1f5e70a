"""The console's charts over a chosen range (docs/dashboard.md, "Charts"): per minute and per
hour, each queue's depth, running jobs and longest wait by priority, its jobs finished by
how they ended, and the workers' busy and total slots; written by the scheduler's queue
samples sweep (``adapters/chart_rollups.py``), once a minute, never per job.

``queue_minutes`` holds a row per (minute, project, queue, priority) with something unfinished
or finished, kept a day; ``queue_hours`` the same summed per hour (depths as sums over the
minutes sampled, ``queue_sample_hours.minutes``), kept eight days. ``queue_sample_minutes``
gains the workers' figures of the minute (null before this release).

Revision ID: 0027
Revises: 0026
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def _figures(total: type[sa.Integer]) -> list[sa.Column[int] | sa.Column[float]]:
    return [
        sa.Column("waiting", total(), nullable=False),
        sa.Column("running", total(), nullable=False),
        sa.Column("oldest_wait_seconds", sa.Float(), nullable=False),
        sa.Column("succeeded", total(), nullable=False),
        sa.Column("dead", total(), nullable=False),
        sa.Column("cancelled", total(), nullable=False),
    ]


def upgrade() -> None:
    for column in ("workers", "busy_slots", "slots"):
        op.add_column("queue_sample_minutes", sa.Column(column, sa.Integer(), nullable=True))
    for table, time, total in (
        ("queue_minutes", "minute", sa.Integer),
        ("queue_hours", "hour", sa.BigInteger),
    ):
        # Keyed by queue first: every chart reads one queue's or the totals' rows over a time
        # range (a minute-first key had the planner scan every queue's rows of the range).
        op.create_table(
            table,
            sa.Column(time, _TZ, nullable=False),
            sa.Column("project_id", sa.Uuid(), nullable=False),
            sa.Column("queue", sa.Text(), nullable=False),
            sa.Column("priority", sa.SmallInteger(), nullable=False),
            *_figures(total),
            sa.PrimaryKeyConstraint("project_id", "queue", time, "priority"),
        )
        op.create_index(f"ix_{table}_{time}", table, [time])
    op.create_table(
        "queue_sample_hours",
        sa.Column("hour", _TZ, primary_key=True),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("worker_minutes", sa.Integer(), nullable=False),
        sa.Column("workers", sa.BigInteger(), nullable=False),
        sa.Column("busy_slots", sa.BigInteger(), nullable=False),
        sa.Column("slots", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("queue_sample_hours")
    for table, time in (("queue_hours", "hour"), ("queue_minutes", "minute")):
        op.drop_index(f"ix_{table}_{time}", table_name=table)
        op.drop_table(table)
    for column in ("slots", "busy_slots", "workers"):
        op.drop_column("queue_sample_minutes", column)
