"""The rollups' tables, trigger functions and ``job_rollups_rebuild()`` (migration 0009's
design, docs/dashboard.md "Analytics from rollups"), generated for a given owner key: the
columns in front of every family's own key. Migration 0014 installs them keyed by
``("project_id",)`` and its downgrade by 0009's ``("submitted_by",)``.

0009 keeps its own copy of this SQL (a migration is history; this module's output for 0009's
key is the same text but for white space, which ``test_scheduler_migrations.py`` checks), so
change this module only in ways that keep both of 0014's keys generating what they do.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

OWNER_0009 = ("submitted_by",)
# By project only: every read the gateway scopes names projects, never a submitter, and a key
# with the submitter too multiplies the rows by the submitters per project (1M jobs of 100
# projects with 10 submitters each: 119k daily count rows against 21k; docs/performance.md).
OWNER_0014 = ("project_id",)

EPOCH = "timestamptz '2000-01-01 00:00:00+00'"
TYPES: dict[str, type[sa.types.TypeEngine[Any]]] = {
    "project_id": sa.Uuid,
    "submitted_by": sa.Text,
    "type": sa.Text,
    "priority": sa.SmallInteger,
    "status": sa.Text,
    "runtime_bucket": sa.SmallInteger,
    "jobs": sa.BigInteger,
    "runtime_ms": sa.Float,
}
# The grain tables' index per owner column: (column, bucket), named ix_job_<family>_<grain>_<...>.
OWNER_INDEXES = {"submitted_by": "owner", "project_id": "project"}
# family: (time column, key after the owner's, measures as SQL over the changed rows, rows
# counted, grains)
FAMILIES: dict[str, tuple[str, tuple[str, ...], dict[str, str], str, tuple[str, ...]]] = {
    "counts": (
        "created_at",
        ("type", "priority", "status"),
        {"jobs": "sum(sign)"},
        "true",
        ("minute", "hour", "day"),
    ),
    "runtimes": (
        "created_at",
        ("runtime_bucket",),
        {"jobs": "sum(sign)", "runtime_ms": "sum(sign * ms)"},
        "ms IS NOT NULL",
        ("minute", "hour", "day"),
    ),
    "finishes": ("finished_at", (), {"jobs": "sum(sign)"}, "finished_at IS NOT NULL", ("minute",)),
}
GRAINS = [(family, grain) for family, spec in FAMILIES.items() for grain in spec[4]]
GRAIN_TABLES = [f"job_{family}_{grain}" for family, grain in GRAINS]
DELTA_TABLES = [f"job_{family}_deltas" for family in FAMILIES]
OPERATIONS = ("insert", "update", "delete")


def key(family: str, owner: tuple[str, ...]) -> tuple[str, ...]:
    return (*owner, *FAMILIES[family][1])


def changed_rows(operation: str, owner: tuple[str, ...]) -> str:
    """The rows a statement changed: +1 for what is now, -1 for what was (an update's rows
    only where a counted column changed)."""
    columns = ["created_at", *owner, "type", "priority", "status", "started_at", "finished_at"]
    names = ", ".join(columns)
    if operation == "insert":
        return f"SELECT 1 AS sign, {names} FROM new_rows"
    if operation == "delete":
        return f"SELECT -1 AS sign, {names} FROM old_rows"
    old, new = (", ".join(f"{row}.{c}" for c in columns) for row in ("o", "n"))
    return (
        "SELECT s.* FROM old_rows o JOIN new_rows n ON n.id = o.id, "
        f"LATERAL (VALUES (-1, {old}), (1, {new})) AS s(sign, {names}) "
        f"WHERE ({old}) IS DISTINCT FROM ({new})"
    )


def append(family: str, owner: tuple[str, ...], rows: str, grain: str | None = None) -> str:
    """INSERT INTO the family's deltas (or, with ``grain``, its rollups of that grain) the
    grouped changes of ``rows`` (sign, the jobs columns, ms)."""
    time, _, measures, counted, _ = FAMILIES[family]
    columns = key(family, owner)
    select_key = ["job_runtime_bucket(ms)" if c == "runtime_bucket" else c for c in columns]
    bucket = (
        f"job_minute({time})"
        if grain in (None, "minute")
        else f"date_bin(interval '1 {grain}', {time}, {EPOCH})"
    )
    groups = ", ".join(str(i) for i in range(1, len(columns) + 2))
    table = f"job_{family}_deltas" if grain is None else f"job_{family}_{grain}"
    return (
        f"INSERT INTO {table} (bucket, {', '.join(columns)}, {', '.join(measures)}) "
        f"SELECT {bucket}, {', '.join(select_key)}, {', '.join(measures.values())} "
        f"FROM {rows} WHERE {counted} GROUP BY {groups} "
        f"HAVING {' OR '.join(f'{m} <> 0' for m in measures.values())}"
    )


def capture(operation: str, owner: tuple[str, ...]) -> str:
    """The statement-level trigger function of ``operation`` on ``jobs``: one grouped append
    to each family's deltas, nothing else (no shared counter row to wait on)."""
    appends = [append(family, owner, "timed") for family in FAMILIES]
    ctes = ",\n  ".join(f"a{i} AS ({sql})" for i, sql in enumerate(appends[:-1]))
    return f"""
CREATE OR REPLACE FUNCTION job_rollups_capture_{operation}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS ({changed_rows(operation, owner)}),
  timed AS (
    SELECT c.*, job_runtime_ms(c.status, c.started_at, c.finished_at) AS ms FROM changed c
  ),
  {ctes}
  {appends[-1]};
  RETURN NULL;
END
$$"""


def rebuild(owner: tuple[str, ...]) -> str:
    """``job_rollups_rebuild()``: every rollup recounted from ``jobs``, the deltas emptied."""
    rows = (
        "(SELECT 1 AS sign, j.*, job_runtime_ms(j.status, j.started_at, j.finished_at) AS ms "
        "FROM jobs j) AS timed"
    )
    tables, deltas = ", ".join(GRAIN_TABLES), ", ".join(DELTA_TABLES)
    inserts = ";\n  ".join(append(family, owner, rows, grain) for family, grain in GRAINS)
    return f"""
CREATE OR REPLACE FUNCTION job_rollups_rebuild() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE jobs IN SHARE MODE;  -- no job changes while it is recounted
  TRUNCATE {deltas}, {tables};
  {inserts};
  ANALYZE {tables};  -- the planner's statistics of the refilled tables, at once
END
$$"""


def _table(name: str, columns: tuple[str, ...], measures: list[str], *, delta: bool) -> None:
    op.create_table(
        name,
        *([sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False)] if delta else []),
        sa.Column("bucket", sa.DateTime(timezone=True), nullable=False),
        *(sa.Column(c, TYPES[c](), nullable=False) for c in columns),
        *(sa.Column(m, TYPES[m](), nullable=False) for m in measures),
        sa.PrimaryKeyConstraint(*(("id",) if delta else ("bucket", *columns))),
    )


def create_tables(owner: tuple[str, ...]) -> None:
    for family, (_, _, measures, _, grains) in FAMILIES.items():
        columns = key(family, owner)
        _table(f"job_{family}_deltas", columns, list(measures), delta=True)
        # A queue table (appended, folded away): vacuumed after a few thousand dead rows, not
        # a fifth of the table, so readers' scans of it stay short.
        op.execute(
            f"ALTER TABLE job_{family}_deltas SET (autovacuum_vacuum_scale_factor = 0, "
            "autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0, "
            "autovacuum_analyze_threshold = 5000)"
        )
        for grain in grains:
            table = f"job_{family}_{grain}"
            _table(table, columns, list(measures), delta=False)
            for column in owner:
                op.create_index(f"ix_{table}_{OWNER_INDEXES[column]}", table, [column, "bucket"])


def drop_tables() -> None:
    op.execute(f"DROP TABLE {', '.join([*GRAIN_TABLES, *DELTA_TABLES])}")


def install(owner: tuple[str, ...]) -> None:
    """The rollups keyed by ``owner`` in place of those there are, recounted from ``jobs``
    (the triggers stay; their functions are replaced)."""
    # Jobs first, as every writer's trigger takes them (then the deltas): a writer waiting on
    # a rollup table while this waits on jobs would be a deadlock. No job changes meanwhile.
    op.execute("LOCK TABLE jobs IN SHARE MODE")
    drop_tables()
    create_tables(owner)
    for operation in OPERATIONS:
        op.execute(capture(operation, owner))
    op.execute(rebuild(owner))
    op.execute("SELECT job_rollups_rebuild()")
