"""The base of every PostgreSQL store: snapshots for reads, short transactions for writes.

Every read request runs inside one REPEATABLE READ, READ ONLY transaction so a page and its
count, or a job and its history, come from the same snapshot. The dashboard writes only what
it owns (schedules, retry policies, dead-letter discards and the dead-letter audit log); job
state is the scheduler's.

With a read engine (``DASHBOARD_DATABASE_READ_URL``, a hot standby) the snapshots run there,
trailing the primary by its replay lag; ``transaction()``, ``ping()`` and every read on
``self.engine`` stay on the primary (docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.scoped_rows import visible

__all__ = ["AnyRow", "Store", "visible"]

AnyRow = Row[*tuple[Any, ...]]


class Store:
    def __init__(self, engine: AsyncEngine, *, read_engine: AsyncEngine | None = None) -> None:
        self.engine = engine
        self.read_engine = engine if read_engine is None else read_engine

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[AsyncConnection]:
        async with self.read_engine.connect() as connection:
            snapshot = await connection.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
            async with snapshot.begin():
                yield snapshot

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.begin() as connection:
            yield connection

    async def ping(self) -> None:
        async with self.engine.connect() as connection:
            await connection.execute(select(1))

    async def ping_reads(self) -> None:
        """``select 1`` where the snapshots run (the primary when no read engine is set)."""
        async with self.read_engine.connect() as connection:
            await connection.execute(select(1))
