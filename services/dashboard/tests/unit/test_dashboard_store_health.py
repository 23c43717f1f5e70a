"""The store health card's verdict (domain/store_health.py): which warnings stand, and when."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs_dashboard.domain.store_health import StoreThreshold, TableStats, judge

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)
THRESHOLD = StoreThreshold(dead_rows=100, dead_ratio=0.2)


def table(name: str, *, live: int = 0, dead: int = 0, enabled: bool = True) -> TableStats:
    return TableStats(name, live, dead, enabled, last_vacuum_at=None, last_analyze_at=None)


def test_a_store_autovacuum_looks_after_with_few_dead_rows_is_ok() -> None:
    health = judge(
        [table("jobs", live=1_000, dead=99), table("job_events", live=10, dead=150)],
        server_autovacuum=True,
        threshold=THRESHOLD,
        checked_at=NOW,
    )
    # job_events is over: 150 >= 100 and 150 > 0.2 * 10
    assert [w.code for w in health.warnings] == ["dead_rows"]
    assert health.warnings[0].tables == ["job_events"]

    calm = judge(
        [table("jobs", live=1_000, dead=150)],  # enough, but not 20 % of the live rows
        server_autovacuum=True,
        threshold=THRESHOLD,
        checked_at=NOW,
    )
    assert calm.verdict == "ok"
    assert calm.warnings == []
    assert calm.tables[0].autovacuum is True


def test_autovacuum_off_for_the_server_outranks_a_table_s_own_setting() -> None:
    tables = [table("jobs", enabled=False), table("workers")]
    off = judge(tables, server_autovacuum=False, threshold=THRESHOLD, checked_at=NOW)
    assert off.verdict == "warning"
    assert [w.code for w in off.warnings] == ["autovacuum_off"]
    assert not any(t.autovacuum for t in off.tables)

    on = judge(tables, server_autovacuum=True, threshold=THRESHOLD, checked_at=NOW)
    assert [(w.code, w.tables) for w in on.warnings] == [("autovacuum_off_for_table", ["jobs"])]


def test_tables_are_listed_most_dead_rows_first_and_a_long_list_is_shortened() -> None:
    names = ["a", "b", "c", "d", "e"]
    health = judge(
        [table(name, dead=200 + i) for i, name in enumerate(names)],
        server_autovacuum=True,
        threshold=THRESHOLD,
        checked_at=NOW,
    )
    assert [t.table for t in health.tables] == ["e", "d", "c", "b", "a"]
    [warning] = health.warnings
    assert warning.tables == ["e", "d", "c", "b", "a"]
    assert "e (204 dead rows), d (203 dead rows), c (202 dead rows) and 2 more" in warning.message
