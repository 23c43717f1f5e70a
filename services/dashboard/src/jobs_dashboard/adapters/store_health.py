"""What PostgreSQL's catalog says about the job store's tables, for the health card: two cheap
reads (``pg_settings``; ``pg_stat_user_tables`` joined to ``pg_class`` for each table's own
``autovacuum_enabled``), never a scan of the tables themselves.

Always on the primary: a hot standby's statistics describe the standby, not the store the
scheduler prunes and vacuums."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.types import Text

from jobs_common.jobstore import metadata
from jobs_dashboard.adapters.store import Store
from jobs_dashboard.domain.store_health import TableStats

STORE_TABLES: tuple[str, ...] = tuple(sorted(metadata.tables))

# The launcher runs only with both on; an unset table option means on, and PostgreSQL's own
# boolean cast reads every spelling it accepts for one ('off', 'false', 'no', '0', prefixes).
_SERVER = text(
    """
    SELECT now() AS now,
           coalesce(bool_and(setting = 'on'), false) AS autovacuum
      FROM pg_settings WHERE name IN ('autovacuum', 'track_counts')
    """
)
_TABLES = text(
    """
    SELECT s.relname AS table, s.n_live_tup AS live, s.n_dead_tup AS dead,
           greatest(s.last_vacuum, s.last_autovacuum) AS vacuumed,
           greatest(s.last_analyze, s.last_autoanalyze) AS analyzed,
           coalesce((SELECT o.option_value::boolean
                       FROM pg_options_to_table(c.reloptions) AS o
                      WHERE o.option_name = 'autovacuum_enabled'), true) AS enabled
      FROM pg_stat_user_tables AS s JOIN pg_class AS c ON c.oid = s.relid
     WHERE s.schemaname = current_schema() AND s.relname = ANY(:tables)
    """
).bindparams(bindparam("tables", type_=ARRAY(Text())))


class StoreHealthReads(Store):
    async def catalog(self) -> tuple[datetime, bool, list[TableStats]]:
        """The database's clock, whether the server's autovacuum runs, and each job store
        table's rows and upkeep."""
        async with self.engine.connect() as connection:
            server = (await connection.execute(_SERVER)).one()
            rows = await connection.execute(_TABLES, {"tables": list(STORE_TABLES)})
            stats = [
                TableStats(
                    table=row.table,
                    live_rows=int(row.live),
                    dead_rows=int(row.dead),
                    autovacuum_enabled=bool(row.enabled),
                    last_vacuum_at=row.vacuumed,
                    last_analyze_at=row.analyzed,
                )
                for row in rows
            ]
        return server.now, bool(server.autovacuum), stats
