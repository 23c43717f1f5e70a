"""One transaction of scheduler work and what follows its commit: the side rows it gathered
(``Changes``) are written before the commit; after it, the relay is woken for the dispatches,
the metrics and job log record the moves, and live views get the changes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_scheduler.adapters.job_log import log_committed
from jobs_scheduler.adapters.job_metrics import record_committed
from jobs_scheduler.adapters.side_rows import Changes

T = TypeVar("T")
Work = Callable[[AsyncConnection, Changes], Awaitable[T]]


def _nothing() -> None:
    return None


def _ignore(_: Changes) -> None:
    return None


class UnitOfWork:
    def __init__(
        self,
        engine: AsyncEngine,
        on_dispatch: Callable[[], None] = _nothing,
        on_committed: Callable[[Changes], None] = _ignore,
    ) -> None:
        self.engine = engine
        self.on_dispatch = on_dispatch
        self.on_committed = on_committed

    async def run(self, work: Work[T]) -> T:
        """Run ``work`` in its own transaction; an exception rolls all of it back."""
        changes = Changes()
        async with self.engine.begin() as connection:
            result = await work(connection, changes)
            await changes.flush(connection)
        record_committed(changes)
        log_committed(changes)
        if changes.messages:
            self.on_dispatch()
        self.on_committed(changes)
        return result
