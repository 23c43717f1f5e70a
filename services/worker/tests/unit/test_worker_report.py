"""The jobs summary built from count rows and rendered as CSV and JSON."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime

import orjson
import pytest

from jobs_worker.domain.report import (
    CountRow,
    RuntimeStats,
    build_summary,
    created_bounds,
    render,
    summary_rows,
)

pytestmark = pytest.mark.unit

ROWS = [
    CountRow("succeeded", "email", 2, 6),
    CountRow("succeeded", "simulate", 1, 2),
    CountRow("dead", "simulate", 1, 2),
    CountRow("queued", "image_resize", 3, 1),
    CountRow("cancelled", "email", 3, 1),
]
NOW = datetime(2025, 3, 1, 12, tzinfo=UTC)


def summary() -> dict[str, object]:
    return build_summary(
        ROWS,
        RuntimeStats(count=8, mean_seconds=1.23456789, p95_seconds=3.5),
        date_from=date(2025, 1, 1),
        date_to=date(2025, 1, 31),
        generated_at=NOW,
    )


def test_counts_rates_and_runtime() -> None:
    s = summary()
    assert s["total"] == 12
    assert s["byStatus"] == {
        "pending": 0,
        "blocked": 0,
        "scheduled": 0,
        "queued": 1,
        "running": 0,
        "failed": 0,
        "succeeded": 8,
        "dead": 2,
        "cancelled": 1,
    }
    assert s["byType"] == {"email": 7, "image_resize": 1, "simulate": 4}
    assert s["byPriority"] == {"1": 4, "2": 6, "3": 2}
    assert s["successRate"] == 0.8
    assert s["runtimeSeconds"] == {"count": 8, "mean": 1.2346, "p95": 3.5}
    assert (s["from"], s["to"]) == ("2025-01-01", "2025-01-31")


def test_empty_range_has_no_rate() -> None:
    s = build_summary(
        [], RuntimeStats(0, None, None), date_from=None, date_to=None, generated_at=NOW
    )
    assert s["total"] == 0
    assert s["successRate"] is None
    assert s["runtimeSeconds"] == {"count": 0, "mean": None, "p95": None}


def test_csv_rendering_has_section_key_value_rows() -> None:
    s = summary()
    text = render(s, "csv").decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["section", "key", "value"]
    assert rows[1:] == summary_rows(s)
    assert ["summary", "total", "12"] in rows
    assert ["type", "simulate", "4"] in rows
    assert ["priority", "3", "2"] in rows
    assert ["runtime", "p95_seconds", "3.5"] in rows


def test_json_rendering_round_trips() -> None:
    s = summary()
    assert orjson.loads(render(s, "json")) == s


def test_created_bounds_are_whole_utc_days_inclusive() -> None:
    lower, upper = created_bounds(date(2025, 1, 1), date(2025, 1, 31))
    assert lower == datetime(2025, 1, 1, tzinfo=UTC)
    assert upper == datetime(2025, 2, 1, tzinfo=UTC)
    assert created_bounds(None, None) == (None, None)
