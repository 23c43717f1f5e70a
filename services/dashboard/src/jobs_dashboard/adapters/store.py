"""The base of every PostgreSQL store: snapshots for reads, short transactions for writes.

Every read request runs inside one REPEATABLE READ, READ ONLY transaction so a page and its
count, or a job and its history, come from the same snapshot. The dashboard writes only what
it owns (schedules, retry policies, dead-letter discards and the dead-letter audit log); job
state is the scheduler's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

AnyRow = Row[*tuple[Any, ...]]


class Store:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as connection:
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
