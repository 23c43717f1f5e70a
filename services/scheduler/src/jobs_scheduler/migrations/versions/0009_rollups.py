"""Rollups: the jobs table counted as it changes, so analytics and totals never scan it.

Revision ID: 0009
Revises: 0008

Three families (``jobs_common.jobstore.ROLLUP_FAMILIES``, as of this revision below): job
counts by created time, owner, type, priority and status; succeeded jobs' runtimes by created
time, owner and runtime bucket; finishes by finished minute and owner. Statement-level
triggers on ``jobs`` (INSERT, UPDATE, DELETE, each seeing the statement's rows as transition
tables) append grouped deltas to each family's ``job_<family>_deltas``: appends only, so
concurrent writers never wait on a shared counter row. The scheduler's rollup sweep
(``app/rollups.py``) folds them into the family's per-minute, per-hour and per-day tables;
readers add the deltas not folded yet, so a read is exact whether the sweep has run or not.
``job_rollups_rebuild()`` recounts everything from ``jobs`` (this migration's backfill, and a
load that bypassed the triggers). Also the indexes of the listing's orders by priority and by
update time (the dashboard's keyset pages). docs/dashboard.md, "Analytics from rollups".
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EPOCH = "timestamptz '2000-01-01 00:00:00+00'"
TYPES = {
    "submitted_by": sa.Text,
    "type": sa.Text,
    "priority": sa.SmallInteger,
    "status": sa.Text,
    "runtime_bucket": sa.SmallInteger,
    "jobs": sa.BigInteger,
    "runtime_ms": sa.Float,
}
# family: (time column, key, measures as SQL over the changed rows, rows counted, grains)
FAMILIES = {
    "counts": (
        "created_at",
        ("submitted_by", "type", "priority", "status"),
        {"jobs": "sum(sign)"},
        "true",
        ("minute", "hour", "day"),
    ),
    "runtimes": (
        "created_at",
        ("submitted_by", "runtime_bucket"),
        {"jobs": "sum(sign)", "runtime_ms": "sum(sign * ms)"},
        "ms IS NOT NULL",
        ("minute", "hour", "day"),
    ),
    "finishes": (
        "finished_at",
        ("submitted_by",),
        {"jobs": "sum(sign)"},
        "finished_at IS NOT NULL",
        ("minute",),
    ),
}

FUNCTIONS = (
    """
CREATE FUNCTION job_runtime_ms(status text, started timestamptz, finished timestamptz)
RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN status = 'succeeded' AND started IS NOT NULL AND finished IS NOT NULL
    THEN (extract(epoch FROM finished - started) * 1000)::double precision END
$$""",
    """
CREATE FUNCTION job_runtime_bucket(ms double precision)
RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (CASE WHEN ms < 1 THEN 0
    ELSE least(1 + floor(ln(ms) / ln(1.1)), 32000) END)::smallint
$$""",
    f"""
CREATE FUNCTION job_minute(at timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT date_bin(interval '1 minute', at, {EPOCH})
$$""",
)

# The rows a statement changed: +1 for what is now, -1 for what was, with their runtime.
_COLUMNS = "created_at, submitted_by, type, priority, status, started_at, finished_at"
SOURCES = {
    "insert": f"SELECT 1 AS sign, {_COLUMNS} FROM new_rows",
    "delete": f"SELECT -1 AS sign, {_COLUMNS} FROM old_rows",
    "update": f"""
      SELECT s.* FROM old_rows o JOIN new_rows n ON n.id = o.id,
        LATERAL (VALUES
          (-1, o.created_at, o.submitted_by, o.type, o.priority, o.status, o.started_at,
           o.finished_at),
          (1, n.created_at, n.submitted_by, n.type, n.priority, n.status, n.started_at,
           n.finished_at)
        ) AS s(sign, {_COLUMNS})
      WHERE (o.created_at, o.submitted_by, o.type, o.priority, o.status, o.started_at,
             o.finished_at)
        IS DISTINCT FROM
            (n.created_at, n.submitted_by, n.type, n.priority, n.status, n.started_at,
             n.finished_at)""",
}
TRIGGERS = {
    "insert": "AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows",
    "update": "AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "delete": "AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows",
}


def _append(family: str, rows: str, grain: str | None = None) -> str:
    """INSERT INTO the family's deltas (or, with ``grain``, its rollups of that grain) the
    grouped changes of ``rows`` (sign, the jobs columns, ms)."""
    time, key, measures, counted, _ = FAMILIES[family]
    select_key = ["job_runtime_bucket(ms)" if c == "runtime_bucket" else c for c in key]
    bucket = (
        f"job_minute({time})"
        if grain in (None, "minute")
        else (f"date_bin(interval '1 {grain}', {time}, {EPOCH})")
    )
    groups = ", ".join(str(i) for i in range(1, len(key) + 2))
    table = f"job_{family}_deltas" if grain is None else f"job_{family}_{grain}"
    return (
        f"INSERT INTO {table} (bucket, {', '.join(key)}, {', '.join(measures)}) "
        f"SELECT {bucket}, {', '.join(select_key)}, {', '.join(measures.values())} "
        f"FROM {rows} WHERE {counted} GROUP BY {groups} "
        f"HAVING {' OR '.join(f'{m} <> 0' for m in measures.values())}"
    )


def capture(op_name: str) -> str:
    appends = [_append(family, "timed") for family in FAMILIES]
    ctes = ",\n  ".join(f"a{i} AS ({sql})" for i, sql in enumerate(appends[:-1]))
    return f"""
CREATE FUNCTION job_rollups_capture_{op_name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS ({SOURCES[op_name]}),
  timed AS (
    SELECT c.*, job_runtime_ms(c.status, c.started_at, c.finished_at) AS ms FROM changed c
  ),
  {ctes}
  {appends[-1]};
  RETURN NULL;
END
$$"""


def rebuild() -> str:
    rows = (
        "(SELECT 1 AS sign, j.*, job_runtime_ms(j.status, j.started_at, j.finished_at) AS ms "
        "FROM jobs j) AS timed"
    )
    tables = ", ".join(
        f"job_{family}_{grain}" for family, spec in FAMILIES.items() for grain in spec[4]
    )
    deltas = ", ".join(f"job_{family}_deltas" for family in FAMILIES)
    inserts = ";\n  ".join(
        _append(family, rows, grain) for family, spec in FAMILIES.items() for grain in spec[4]
    )
    return f"""
CREATE FUNCTION job_rollups_rebuild() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE jobs IN SHARE MODE;  -- no job changes while it is recounted
  TRUNCATE {deltas}, {tables};
  {inserts};
  ANALYZE {tables};  -- the planner's statistics of the refilled tables, at once
END
$$"""


def _table(name: str, key: Sequence[str], measures: Sequence[str], *, delta: bool) -> None:
    op.create_table(
        name,
        *([sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False)] if delta else []),
        sa.Column("bucket", sa.DateTime(timezone=True), nullable=False),
        *(sa.Column(c, TYPES[c](), nullable=False) for c in key),
        *(sa.Column(m, TYPES[m](), nullable=False) for m in measures),
        sa.PrimaryKeyConstraint(*(("id",) if delta else ("bucket", *key))),
    )


def upgrade() -> None:
    # if_not_exists: an operator may have built them CONCURRENTLY first (docs/operations.md).
    op.create_index(
        "ix_jobs_priority_created", "jobs", ["priority", "created_at"], if_not_exists=True
    )
    op.create_index("ix_jobs_updated", "jobs", ["updated_at"], if_not_exists=True)
    for family, (_, key, measures, _, grains) in FAMILIES.items():
        _table(f"job_{family}_deltas", key, list(measures), delta=True)
        # A queue table (appended, folded away): vacuumed after a few thousand dead rows, not
        # a fifth of the table, so readers' scans of it stay short.
        op.execute(
            f"ALTER TABLE job_{family}_deltas SET (autovacuum_vacuum_scale_factor = 0, "
            "autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0, "
            "autovacuum_analyze_threshold = 5000)"
        )
        for grain in grains:
            _table(f"job_{family}_{grain}", key, list(measures), delta=False)
            op.create_index(
                f"ix_job_{family}_{grain}_owner",
                f"job_{family}_{grain}",
                ["submitted_by", "bucket"],
            )
    for function in FUNCTIONS:
        op.execute(function)
    for name, trigger in TRIGGERS.items():
        op.execute(capture(name))
        op.execute(
            f"CREATE TRIGGER jobs_rollups_{name} {trigger} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION job_rollups_capture_{name}()"
        )
    op.execute(rebuild())
    op.execute("SELECT job_rollups_rebuild()")


def downgrade() -> None:
    for name in TRIGGERS:
        op.execute(f"DROP TRIGGER jobs_rollups_{name} ON jobs")
        op.execute(f"DROP FUNCTION job_rollups_capture_{name}()")
    op.execute("DROP FUNCTION job_rollups_rebuild()")
    op.execute("DROP FUNCTION job_minute(timestamptz)")
    op.execute("DROP FUNCTION job_runtime_bucket(double precision)")
    op.execute("DROP FUNCTION job_runtime_ms(text, timestamptz, timestamptz)")
    for family, spec in FAMILIES.items():
        for grain in spec[4]:
            op.drop_table(f"job_{family}_{grain}")
        op.drop_table(f"job_{family}_deltas")
    op.drop_index("ix_jobs_updated", table_name="jobs")
    op.drop_index("ix_jobs_priority_created", table_name="jobs")
