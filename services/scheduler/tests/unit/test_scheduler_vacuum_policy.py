"""When the scheduler vacuums a table the retention pruned (domain/vacuum.py)."""

from __future__ import annotations

import pytest

from jobs_scheduler.domain.vacuum import (
    TableStats,
    VacuumPolicy,
    VacuumReason,
    reloption_enabled,
    sweep_vacuum_reason,
    vacuum_reason,
)

pytestmark = pytest.mark.unit

POLICY = VacuumPolicy(min_dead_rows=100_000, dead_ratio=0.2)


def stats(live: int, dead: int, *, enabled: bool = True) -> TableStats:
    return TableStats("jobs", live_rows=live, dead_rows=dead, autovacuum_enabled=enabled)


def reason(seen: TableStats, *, server: bool = True) -> VacuumReason | None:
    return vacuum_reason(seen, server_autovacuum=server, policy=POLICY)


def test_autovacuum_off_for_the_server_or_the_table_vacuums_any_dead_rows() -> None:
    assert reason(stats(1_000, 10), server=False) == VacuumReason.AUTOVACUUM_OFF
    assert reason(stats(1_000, 10, enabled=False)) == VacuumReason.AUTOVACUUM_OFF_FOR_TABLE
    assert reason(stats(1_000, 0), server=False) is None


def test_with_autovacuum_on_only_dead_rows_over_both_thresholds_vacuum() -> None:
    assert reason(stats(300_000, 842_000)) == VacuumReason.DEAD_ROWS
    assert reason(stats(300_000, 99_999)) is None  # under the rows floor
    assert reason(stats(1_000_000, 150_000)) is None  # under the ratio: autovacuum keeps up
    assert reason(stats(400_000, 100_000)) == VacuumReason.DEAD_ROWS


@pytest.mark.parametrize(
    ("value", "enabled"),
    [
        (None, True),
        ("true", True),
        ("on", True),
        ("1", True),
        ("false", False),
        ("off", False),
        ("FALSE", False),
        ("0", False),
        ("no", False),
        ("f", False),
    ],
)
def test_the_reloption_as_postgresql_stores_it(value: str | None, enabled: bool) -> None:
    assert reloption_enabled(value) is enabled


@pytest.mark.parametrize(
    ("seen", "server", "expected"),
    [
        (stats(1_000_000, 1), False, None),  # a dead row is no reason between prunes
        (stats(1_000_000, 150_000), False, None),  # under a fifth of the live ones
        (stats(0, 100_000), False, VacuumReason.AUTOVACUUM_OFF),  # the fold's deltas
        (stats(10, 99_999), False, None),
        (stats(100_000, 100_000, enabled=False), True, VacuumReason.AUTOVACUUM_OFF_FOR_TABLE),
        (stats(100_000, 100_000), True, VacuumReason.DEAD_ROWS),  # autovacuum behind
    ],
)
def test_the_sweep_vacuums_only_past_the_threshold(
    seen: TableStats, server: bool, expected: VacuumReason | None
) -> None:
    assert sweep_vacuum_reason(seen, server_autovacuum=server, policy=POLICY) == expected
