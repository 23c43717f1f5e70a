"""The job store's health as the console's health card shows it (pure): whether PostgreSQL's
autovacuum looks after each table, how many dead rows each holds, and a verdict with its
warnings in plain words.

Dead rows are what updates and deletes (retention prunes) leave behind until a ``VACUUM``
reclaims them; with autovacuum off nothing does but the scheduler's own upkeep after a prune
(docs/operations.md, "After a prune"), and reads slow down as they pile up. A table is over
the threshold by the scheduler's "autovacuum is behind" rule (``SCHEDULER_VACUUM_DEAD_ROWS``,
``SCHEDULER_VACUUM_DEAD_RATIO``): at least ``dead_rows`` dead rows and more than
``dead_ratio`` of its live ones."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field

from jobs_common.api_models import CamelModel

StoreWarningCode = Literal["autovacuum_off", "autovacuum_off_for_table", "dead_rows"]
# How many table names a warning's message spells out before "and N more".
NAMED_TABLES = 3


@dataclass(frozen=True)
class TableStats:
    """One job store table as ``pg_stat_user_tables`` and ``pg_class`` see it."""

    table: str
    live_rows: int
    dead_rows: int
    autovacuum_enabled: bool  # the table's own setting (reloptions); the server's is apart
    last_vacuum_at: datetime | None  # the latest VACUUM, by hand or by autovacuum
    last_analyze_at: datetime | None


class StoreThreshold(CamelModel):
    """Dead rows past which a table is warned about: at least ``deadRows`` and more than
    ``deadRatio`` of its live rows."""

    dead_rows: int = Field(description="At least this many dead rows.")
    dead_ratio: float = Field(description="And more dead rows than this share of live ones.")

    def exceeded(self, stats: TableStats) -> bool:
        return stats.dead_rows >= self.dead_rows and stats.dead_rows > (
            self.dead_ratio * stats.live_rows
        )


class TableHealth(CamelModel):
    table: str
    live_rows: int = Field(description="Live rows (PostgreSQL's estimate).")
    dead_rows: int = Field(description="Dead rows no VACUUM has reclaimed yet.")
    autovacuum: bool = Field(
        description="Whether autovacuum looks after this table: on for the server and not "
        "switched off for the table."
    )
    last_vacuum_at: datetime | None = Field(description="The latest VACUUM, manual or auto.")
    last_analyze_at: datetime | None = Field(description="The latest ANALYZE, manual or auto.")
    over_threshold: bool = Field(description="Its dead rows exceed the threshold.")


class StoreWarning(CamelModel):
    code: StoreWarningCode
    message: str = Field(description="What is wrong and what to do, in plain words.")
    tables: list[str] = Field(description="The tables concerned (all of them: the server).")


class StoreHealth(CamelModel):
    """The job store's vacuum health (admins): ``verdict`` is ``warning`` when any warning
    stands, else ``ok``."""

    verdict: Literal["ok", "warning"]
    autovacuum: bool = Field(
        description="PostgreSQL's autovacuum runs on the server (autovacuum and track_counts on)."
    )
    threshold: StoreThreshold
    warnings: list[StoreWarning]
    tables: list[TableHealth] = Field(description="The job store's tables, most dead rows first.")
    checked_at: datetime = Field(description="The database's clock when read.")


def _named(tables: list[str]) -> str:
    shown = ", ".join(tables[:NAMED_TABLES])
    rest = len(tables) - NAMED_TABLES
    return shown if rest <= 0 else f"{shown} and {rest} more"


def _warnings(
    *, server_autovacuum: bool, tables: list[TableHealth], threshold: StoreThreshold
) -> list[StoreWarning]:
    warnings: list[StoreWarning] = []
    if not server_autovacuum:
        warnings.append(
            StoreWarning(
                code="autovacuum_off",
                message="PostgreSQL's autovacuum is off: nothing reclaims the dead rows that "
                "updates and deletes leave, but the scheduler's vacuum after a prune. Turn "
                "autovacuum on (or schedule VACUUM) for the job store.",
                tables=[t.table for t in tables],
            )
        )
    else:
        off = [t.table for t in tables if not t.autovacuum]
        if off:
            warnings.append(
                StoreWarning(
                    code="autovacuum_off_for_table",
                    message=f"Autovacuum is switched off for {_named(off)} "
                    "(autovacuum_enabled=false): turn it back on for them.",
                    tables=off,
                )
            )
    behind = [t for t in tables if t.over_threshold]
    if behind:
        names = [f"{t.table} ({t.dead_rows:,} dead rows)" for t in behind]
        warnings.append(
            StoreWarning(
                code="dead_rows",
                message=f"Too many dead rows in {_named(names)}: reads slow down until a "
                "VACUUM reclaims them. Check that autovacuum keeps up and that no long "
                "transaction holds it back.",
                tables=[t.table for t in behind],
            )
        )
    return warnings


def judge(
    stats: Iterable[TableStats],
    *,
    server_autovacuum: bool,
    threshold: StoreThreshold,
    checked_at: datetime,
) -> StoreHealth:
    """The health card's answer for what the catalog said."""
    tables = [
        TableHealth(
            table=s.table,
            live_rows=s.live_rows,
            dead_rows=s.dead_rows,
            autovacuum=server_autovacuum and s.autovacuum_enabled,
            last_vacuum_at=s.last_vacuum_at,
            last_analyze_at=s.last_analyze_at,
            over_threshold=threshold.exceeded(s),
        )
        for s in sorted(stats, key=lambda s: (-s.dead_rows, s.table))
    ]
    warnings = _warnings(server_autovacuum=server_autovacuum, tables=tables, threshold=threshold)
    return StoreHealth(
        verdict="warning" if warnings else "ok",
        autovacuum=server_autovacuum,
        threshold=threshold,
        warnings=warnings,
        tables=tables,
        checked_at=checked_at,
    )
