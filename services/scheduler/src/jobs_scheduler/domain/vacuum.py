"""Whether a table the retention pruned is vacuumed by the scheduler itself: where autovacuum
is off (for the server or the table) nothing else reclaims what a prune left behind, and where
it is on but behind, the dead rows say so. Pure: the numbers come from ``pg_stat_user_tables``
and ``pg_class.reloptions`` (``adapters/store_stats.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# How PostgreSQL spells a false boolean reloption (it accepts any unique prefix of these).
_FALSE = ("false", "off", "no", "0")


class VacuumReason(StrEnum):
    AUTOVACUUM_OFF = "autovacuum_off"  # the server's autovacuum (or track_counts) is off
    AUTOVACUUM_OFF_FOR_TABLE = "autovacuum_off_for_table"  # reloptions autovacuum_enabled=false
    DEAD_ROWS = "dead_rows"  # autovacuum runs but has not caught up


@dataclass(frozen=True)
class TableStats:
    """One table as the statistics see it."""

    table: str
    live_rows: int
    dead_rows: int
    autovacuum_enabled: bool  # the table's own setting (the server's is apart)


@dataclass(frozen=True)
class VacuumPolicy:
    """Autovacuum on but behind: at least ``min_dead_rows`` dead rows and more than
    ``dead_ratio`` of the live ones."""

    min_dead_rows: int
    dead_ratio: float


def reloption_enabled(value: str | None) -> bool:
    """``autovacuum_enabled`` as stored in ``pg_class.reloptions`` (None: not set, on)."""
    if value is None:
        return True
    spelled = value.strip().lower()
    return not any(word.startswith(spelled) for word in _FALSE if spelled)


def autovacuum_runs(stats: TableStats, *, server_autovacuum: bool) -> bool:
    """Whether autovacuum looks after this table at all."""
    return server_autovacuum and stats.autovacuum_enabled


def vacuum_reason(
    stats: TableStats, *, server_autovacuum: bool, policy: VacuumPolicy
) -> VacuumReason | None:
    """Why the scheduler vacuums this pruned table itself, or None (an ANALYZE is enough).
    ``stats.dead_rows`` is at least what the prune removed (the statistics may lag)."""
    if stats.dead_rows <= 0:
        return None
    if not server_autovacuum:
        return VacuumReason.AUTOVACUUM_OFF
    if not stats.autovacuum_enabled:
        return VacuumReason.AUTOVACUUM_OFF_FOR_TABLE
    if stats.dead_rows >= policy.min_dead_rows and stats.dead_rows > (
        policy.dead_ratio * stats.live_rows
    ):
        return VacuumReason.DEAD_ROWS
    return None


def sweep_vacuum_reason(
    stats: TableStats, *, server_autovacuum: bool, policy: VacuumPolicy
) -> VacuumReason | None:
    """Why the periodic sweep vacuums a table nobody pruned, or None. Updates and the rollup
    fold's deletes leave dead rows every day with no prune at all; where autovacuum does not
    run, or has not caught up, a table past the policy's threshold (as autovacuum's own would
    be) is vacuumed, not every table with a dead row."""
    past = stats.dead_rows >= policy.min_dead_rows and stats.dead_rows > (
        policy.dead_ratio * stats.live_rows
    )
    return (
        vacuum_reason(stats, server_autovacuum=server_autovacuum, policy=policy) if past else None
    )
