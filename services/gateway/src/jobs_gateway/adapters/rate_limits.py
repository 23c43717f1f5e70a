"""Shared rate-limit counters in PostgreSQL (``gateway.rate_limit_counters``).

Every write is one ``INSERT ... ON CONFLICT DO UPDATE SET hits = hits + excluded.hits
RETURNING hits``: atomic per row, whatever the number of replicas. Rows are written in key
order so two replicas flushing overlapping keys lock them in the same order (no deadlock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_gateway.adapters.tables import rate_limit_counters
from jobs_gateway.domain.rate_limit import Deltas, Scope

C = rate_limit_counters.c
# Rows per statement (5 parameters each, far below PostgreSQL's 32,767).
BATCH_ROWS = 1_000


def _at(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, UTC)


@dataclass(frozen=True)
class Hit:
    """One hit of ``key`` in the window ``[window_start, window_end)`` (epoch seconds)."""

    scope: Scope
    key: str
    window_start: int
    window_end: int


class RateLimitCounters:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def _add(self, rows: list[dict[str, object]]) -> dict[tuple[str, str], int]:
        rows.sort(key=lambda row: (str(row["scope"]), str(row["key"])))
        values = insert(rate_limit_counters).values(rows)
        statement = values.on_conflict_do_update(
            index_elements=[C.scope, C.key, C.window_start],
            set_={"hits": C.hits + values.excluded.hits},
        ).returning(C.scope, C.key, C.hits)
        async with self._engine.begin() as connection:
            result = await connection.execute(statement)
            return {(row.scope, row.key): int(row.hits) for row in result}

    async def hit(self, hits: Sequence[Hit]) -> list[int]:
        """Count one hit for each (one statement); each one's count in its window, this hit
        included, in the order given."""
        if not hits:
            return []
        counts = await self._add(
            [
                {
                    "scope": hit.scope.value,
                    "key": hit.key,
                    "window_start": _at(hit.window_start),
                    "window_end": _at(hit.window_end),
                    "hits": 1,
                }
                for hit in hits
            ]
        )
        return [counts[(hit.scope.value, hit.key)] for hit in hits]

    async def add(self, scope: Scope, deltas: Deltas) -> Mapping[str, int]:
        """Add a replica's pending hits of one window (one statement per :data:`BATCH_ROWS`
        keys); the shared count of each key, all replicas' hits included."""
        if not deltas.hits:
            return {}
        start, end = _at(deltas.window_start), _at(deltas.window_end)
        rows: list[dict[str, object]] = [
            {"scope": scope.value, "key": key, "window_start": start, "window_end": end, "hits": n}
            for key, n in sorted(deltas.hits.items())
        ]
        shared: dict[str, int] = {}
        for first in range(0, len(rows), BATCH_ROWS):
            counts = await self._add(rows[first : first + BATCH_ROWS])
            shared.update({key: hits for (_, key), hits in counts.items()})
        return shared

    async def purge(self, *, ended_before: datetime, limit: int) -> int:
        """Delete at most ``limit`` counters whose window ended before ``ended_before``."""
        batch = (
            sa.select(C.scope, C.key, C.window_start)
            .where(C.window_end < ended_before)
            .limit(limit)
        )
        statement = rate_limit_counters.delete().where(
            sa.tuple_(C.scope, C.key, C.window_start).in_(batch)
        )
        async with self._engine.begin() as connection:
            return (await connection.execute(statement)).rowcount
