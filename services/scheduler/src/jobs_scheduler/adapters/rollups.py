"""Folding the rollup deltas (migrations 0009, 0014) into the per-minute, per-hour and per-day
rollups of each family (``jobs_common.jobstore.ROLLUP_FAMILIES``).

Triggers on ``jobs`` append a delta row per statement and group; :func:`fold` takes the
oldest ``limit`` deltas of each family, adds them to each of the family's rollup tables, and
deletes the rows that count nothing any more, all in the caller's transaction: a crash folds
nothing twice and loses nothing. One folder at a time (a transaction-scoped advisory lock):
two would merge the same rows in different orders. Readers add the deltas not folded yet, so
the fold's pace changes no answer, only how many delta rows a read adds up."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, TextClause, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import ROLLUP_FAMILIES, ROLLUPS

# pg_try_advisory_xact_lock(namespace, key): the rollup folder's.
LOCK = text("SELECT pg_try_advisory_xact_lock(1919, 1)")
EPOCH = "timestamptz '2000-01-01 00:00:00+00'"
GRAIN_BUCKET = {
    "minute": "bucket",
    "hour": f"date_bin(interval '1 hour', bucket, {EPOCH})",
    "day": f"date_bin(interval '1 day', bucket, {EPOCH})",
}
REBUILD: TextClause = text("SELECT job_rollups_rebuild()")


class Fold:
    """The take and merge statements of one family: its deltas into each of its grains."""

    def __init__(self, family: str) -> None:
        key, measures, grains = ROLLUP_FAMILIES[family]
        deltas: Table = ROLLUPS[family]["delta"]
        self.columns = ["bucket", *key, *measures]
        names = ", ".join(self.columns)
        group = ", ".join(["bucket", *key])
        sums = ", ".join(f"sum({m}) AS {m}" for m in measures)
        self.take = text(
            f"WITH taken AS (DELETE FROM {deltas.name} WHERE id IN "
            f"(SELECT id FROM {deltas.name} ORDER BY id LIMIT :limit) RETURNING {names}) "
            f"SELECT {group}, {sums}, count(*) AS taken FROM taken GROUP BY {group}"
        )
        arrays = [bindparam(c, type_=ARRAY(deltas.c[c].type)) for c in self.columns]
        matches = " AND ".join(f"r.{c} = d.{c}" for c in ["bucket", *key])
        adds = ", ".join(f"{m} = r.{m} + d.{m}" for m in measures)
        values = ", ".join(f"d.{c}" for c in self.columns)
        rest = ", ".join(key)
        self.merges = [
            text(
                f"MERGE INTO {ROLLUPS[family][grain].name} r USING ("
                f"SELECT {GRAIN_BUCKET[grain]} AS bucket, {rest}, {sums} "
                f"FROM unnest({', '.join(f':{c}' for c in self.columns)}) AS d({names}) "
                f"GROUP BY 1, {rest}) d ON {matches} "
                "WHEN MATCHED AND r.jobs + d.jobs = 0 THEN DELETE "
                f"WHEN MATCHED THEN UPDATE SET {adds} "
                f"WHEN NOT MATCHED AND d.jobs <> 0 THEN INSERT ({names}) VALUES ({values})"
            ).bindparams(*arrays)
            for grain in grains
        ]

    async def run(self, connection: AsyncConnection, limit: int) -> int:
        rows = (await connection.execute(self.take, {"limit": limit})).all()
        if not rows:
            return 0
        arrays: dict[str, list[Any]] = {c: [getattr(r, c) for r in rows] for c in self.columns}
        for merge in self.merges:
            await connection.execute(merge, arrays)
        return sum(row.taken for row in rows)


FOLDS = [Fold(family) for family in ROLLUP_FAMILIES]


async def fold(connection: AsyncConnection, limit: int) -> int:
    """Fold at most ``limit`` deltas of each family; returns the most one family folded (0
    when another replica holds the folder's lock)."""
    if not await connection.scalar(LOCK):
        return 0
    return max([await family.run(connection, limit) for family in FOLDS])


async def rebuild_rollups(connection: AsyncConnection) -> None:
    """Recount every rollup from ``jobs`` (``job_rollups_rebuild()``), after a load that
    bypassed the triggers. It holds a SHARE lock on ``jobs`` (no job changes) while it runs."""
    await connection.execute(REBUILD)
