"""A store that stays healthy (docs/operations.md, "After a prune"): the tables a retention
pass pruned are analyzed once the pass drained its backlog, and vacuumed by the scheduler
itself where autovacuum is off or behind (``domain/vacuum.py`` decides), and so is any table
whose dead rows pass the threshold between prunes (updates, the rollup fold); the dead rows of every
job store table and whether autovacuum looks after it are exported as gauges, and an
autovacuum that is off is a warning of ``/ready`` (still 200).

``VACUUM`` cannot run in a transaction: the upkeep uses an autocommit connection of its own,
under a session advisory lock, so one replica at a time maintains the store."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_scheduler.adapters import store_stats
from jobs_scheduler.adapters.metrics import (
    JOBSTORE_AUTOVACUUM,
    JOBSTORE_DEAD_ROWS,
    STORE_MAINTENANCE,
)
from jobs_scheduler.adapters.retention import CASCADED
from jobs_scheduler.domain.vacuum import (
    TableStats,
    VacuumPolicy,
    VacuumReason,
    autovacuum_runs,
    sweep_vacuum_reason,
    vacuum_reason,
)

log = logging.getLogger(__name__)

AUTOVACUUM_OFF_WARNING = "autovacuum_off"


@dataclass(frozen=True)
class Maintained:
    """What the upkeep did to one table."""

    table: str
    vacuumed: VacuumReason | None  # None: analyzed only
    dead_rows_before: int
    dead_rows_after: int
    live_rows_after: int


class StoreUpkeep:
    def __init__(self, engine: AsyncEngine, *, self_vacuum: bool, policy: VacuumPolicy) -> None:
        self.engine = engine
        self.self_vacuum = self_vacuum
        self.policy = policy
        self.pending: dict[str, int] = {}  # table -> rows pruned since the last upkeep
        self.autovacuum_off: list[str] = []  # tables autovacuum does not look after (last seen)

    def pruned(self, table: str, count: int) -> None:
        """The retention removed ``count`` rows of ``table`` (those cascaded with it too)."""
        if count <= 0:
            return
        self.pending[table] = self.pending.get(table, 0) + count
        for cascaded in CASCADED.get(table, ()):  # their dead rows: as the statistics count
            self.pending.setdefault(cascaded, 0)

    def warnings(self) -> list[str]:
        """``/ready``'s warnings: autovacuum is off for a job store table (or the server)."""
        return [AUTOVACUUM_OFF_WARNING] if self.autovacuum_off else []

    def after_pass(
        self, step: Callable[[], Awaitable[int]], *, full_batch: int
    ) -> Callable[[], Awaitable[int]]:
        """``step`` (one retention pass), then the upkeep once it drained (a full batch runs
        again at once: the upkeep waits for the last one)."""

        async def run() -> int:
            handled = await step()
            if handled < full_batch and self.pending:
                await self.maintain()
            return handled

        return run

    async def maintain(self) -> list[Maintained]:
        """Analyze, or vacuum, the tables pruned since the last upkeep; nothing while another
        replica holds the upkeep's lock (it maintains the same tables)."""
        pruned, self.pending = self.pending, {}
        async with self.engine.connect() as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            if not await store_stats.try_lock(connection):
                return []
            try:
                return [
                    await self._maintain(connection, table, rows)
                    for table, rows in sorted(pruned.items())
                ]
            finally:
                await store_stats.unlock(connection)

    async def _maintain(self, connection: AsyncConnection, table: str, pruned: int) -> Maintained:
        server_on = await store_stats.server_autovacuum(connection)
        before = await self._stats(connection, table)
        # The statistics may not count the prune yet: at least what it removed is dead.
        seen = TableStats(
            table=table,
            live_rows=before.live_rows,
            dead_rows=max(before.dead_rows, pruned),
            autovacuum_enabled=before.autovacuum_enabled,
        )
        reason = vacuum_reason(seen, server_autovacuum=server_on, policy=self.policy)
        started = time.monotonic()
        if reason is not None and self.self_vacuum:
            await store_stats.vacuum_analyze(connection, table)
            STORE_MAINTENANCE.labels(table, "vacuum").inc()
        else:
            await store_stats.analyze(connection, table)
            STORE_MAINTENANCE.labels(table, "analyze").inc()
        after = await self._stats(connection, table)
        JOBSTORE_DEAD_ROWS.labels(table).set(after.dead_rows)
        done = Maintained(
            table=table,
            vacuumed=reason if self.self_vacuum else None,
            dead_rows_before=seen.dead_rows,
            dead_rows_after=after.dead_rows,
            live_rows_after=after.live_rows,
        )
        extra = {
            "action": "store_upkeep",
            "table": table,
            "pruned_rows": pruned,
            "vacuumed": done.vacuumed is not None,
            "reason": None if reason is None else reason.value,
            "dead_rows_before": done.dead_rows_before,
            "dead_rows_after": done.dead_rows_after,
            "live_rows_after": done.live_rows_after,
            "seconds": round(time.monotonic() - started, 3),
        }
        if reason is not None and not self.self_vacuum:
            # an operator vacuums elsewhere: say what this table needs
            log.warning("pruned table needs a vacuum (self-vacuum off)", extra=extra)
        else:
            log.info("pruned table maintained", extra=extra)
        return done

    async def _stats(self, connection: AsyncConnection, table: str) -> TableStats:
        found = await store_stats.table_stats(connection, [table])
        return found.get(table, TableStats(table, 0, 0, autovacuum_enabled=True))

    async def observe(self) -> int:
        """Refresh the gauges and the warning from the statistics of every job store table;
        with self-vacuum, vacuum those past the policy's threshold that autovacuum does not
        look after or has not caught up with (``sweep_vacuum_reason``), pruned or not."""
        async with self.engine.connect() as connection:
            server_on = await store_stats.server_autovacuum(connection)
            stats = await store_stats.table_stats(connection)
        if self.self_vacuum:
            for table, seen in stats.items():
                if sweep_vacuum_reason(seen, server_autovacuum=server_on, policy=self.policy):
                    self.pending.setdefault(table, 0)
            if self.pending:
                await self.maintain()  # sets the gauges of what it vacuumed
                async with self.engine.connect() as connection:
                    stats = await store_stats.table_stats(connection)
        off = []
        for table, seen in sorted(stats.items()):
            JOBSTORE_DEAD_ROWS.labels(table).set(seen.dead_rows)
            runs = autovacuum_runs(seen, server_autovacuum=server_on)
            JOBSTORE_AUTOVACUUM.labels(table).set(1 if runs else 0)
            if not runs:
                off.append(table)
        if off and not self.autovacuum_off:
            log.warning(
                "autovacuum does not look after the job store",
                extra={"action": "autovacuum_off", "server": server_on, "tables": off},
            )
        self.autovacuum_off = off
        return len(stats)
