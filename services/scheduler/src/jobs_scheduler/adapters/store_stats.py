"""What PostgreSQL says about the job store's tables (``pg_stat_user_tables``, ``pg_class``),
whether its autovacuum runs, and the maintenance the scheduler runs on them (``ANALYZE``,
``VACUUM (ANALYZE)``: the latter only on an autocommit connection, never in a transaction).

Only the job store's own tables (``jobs_common.jobstore.metadata``) are read or maintained: a
table name reaches SQL only after it was found there, quoted."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import Text

from jobs_common.jobstore import metadata
from jobs_scheduler.domain.vacuum import TableStats, reloption_enabled

# pg_try_advisory_lock(namespace, key): the store upkeep's (one replica at a time); the
# namespace is the scheduler's (adapters/rollups.py holds key 1).
UPKEEP_LOCK = (1919, 2)

STORE_TABLES: tuple[str, ...] = tuple(sorted(metadata.tables))

_STATS = text(
    """
    SELECT c.relname AS table, s.n_live_tup AS live, s.n_dead_tup AS dead,
           (SELECT o.option_value FROM pg_options_to_table(c.reloptions) AS o
             WHERE o.option_name = 'autovacuum_enabled') AS enabled
      FROM pg_stat_user_tables AS s JOIN pg_class AS c ON c.oid = s.relid
     WHERE s.schemaname = current_schema() AND s.relname = ANY(:tables)
    """
).bindparams(bindparam("tables", type_=ARRAY(Text())))

_SERVER_AUTOVACUUM = text(
    """
    SELECT current_setting('autovacuum') = 'on' AND current_setting('track_counts') = 'on'
    """
)


def _known(table: str) -> str:
    if table not in metadata.tables:
        raise ValueError(f"not a job store table: {table!r}")
    return table


async def server_autovacuum(connection: AsyncConnection) -> bool:
    """Whether the server's autovacuum launcher runs (it needs ``track_counts`` too)."""
    on = await connection.scalar(_SERVER_AUTOVACUUM)
    return bool(on)


async def table_stats(
    connection: AsyncConnection, tables: Iterable[str] = STORE_TABLES
) -> dict[str, TableStats]:
    """Live and dead rows and the table's own autovacuum setting, by table (a table never
    read since the server started its statistics shows zeros)."""
    names = [_known(table) for table in tables]
    rows = await connection.execute(_STATS, {"tables": names})
    return {
        row.table: TableStats(
            table=row.table,
            live_rows=int(row.live),
            dead_rows=int(row.dead),
            autovacuum_enabled=reloption_enabled(row.enabled),
        )
        for row in rows
    }


def _quoted(connection: AsyncConnection, table: str) -> str:
    return connection.dialect.identifier_preparer.quote(_known(table))


async def analyze(connection: AsyncConnection, table: str) -> None:
    await connection.execute(text(f"ANALYZE {_quoted(connection, table)}"))


async def vacuum_analyze(connection: AsyncConnection, table: str) -> None:
    """``VACUUM (ANALYZE)``: ``connection`` must be in autocommit."""
    await connection.execute(text(f"VACUUM (ANALYZE) {_quoted(connection, table)}"))


async def try_lock(connection: AsyncConnection) -> bool:
    """The upkeep's session lock (held by this connection until :func:`unlock`)."""
    got = await connection.scalar(
        text("SELECT pg_try_advisory_lock(:namespace, :key)"),
        {"namespace": UPKEEP_LOCK[0], "key": UPKEEP_LOCK[1]},
    )
    return bool(got)


async def unlock(connection: AsyncConnection) -> None:
    await connection.execute(
        text("SELECT pg_advisory_unlock(:namespace, :key)"),
        {"namespace": UPKEEP_LOCK[0], "key": UPKEEP_LOCK[1]},
    )


async def flush_own_stats(connection: AsyncConnection) -> None:
    """Ask this backend to publish its pending table statistics when its transaction ends
    (PostgreSQL 15+; older servers publish within half a second anyway), so the dead rows a
    prune leaves are seen by the upkeep that follows and do not arrive after its VACUUM."""
    version = connection.dialect.server_version_info
    if version is not None and version >= (15,):
        await connection.execute(text("SELECT pg_stat_force_next_flush()"))
