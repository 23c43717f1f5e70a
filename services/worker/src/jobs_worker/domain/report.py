"""The jobs summary report: built from grouped count rows and runtime statistics, rendered
as CSV (``section,key,value``) or JSON. Pure: the database query lives in adapters."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

import orjson

from jobs_common.contracts import JobStatus

ReportFormat = Literal["csv", "json"]


@dataclass(frozen=True)
class CountRow:
    """Number of jobs with one (status, type, priority)."""

    status: str
    job_type: str
    priority: int
    count: int


@dataclass(frozen=True)
class RuntimeStats:
    """Run time (finished_at - started_at) of the succeeded jobs in the range."""

    count: int
    mean_seconds: float | None
    p95_seconds: float | None


def created_bounds(
    date_from: date | None, date_to: date | None
) -> tuple[datetime | None, datetime | None]:
    """``[from 00:00 UTC, (to + 1 day) 00:00 UTC)``: both dates inclusive, whole UTC days."""
    lower = datetime.combine(date_from, time.min, UTC) if date_from else None
    upper = datetime.combine(date_to + timedelta(days=1), time.min, UTC) if date_to else None
    return lower, upper


def build_summary(
    rows: Iterable[CountRow],
    runtime: RuntimeStats,
    *,
    date_from: date | None,
    date_to: date | None,
    generated_at: datetime,
) -> dict[str, Any]:
    by_status: dict[str, int] = {status.value: 0 for status in JobStatus}
    by_type: dict[str, int] = {}
    by_priority: dict[str, int] = {"1": 0, "2": 0, "3": 0}
    total = 0
    for row in rows:
        total += row.count
        by_status[row.status] = by_status.get(row.status, 0) + row.count
        by_type[row.job_type] = by_type.get(row.job_type, 0) + row.count
        key = str(row.priority)
        by_priority[key] = by_priority.get(key, 0) + row.count
    finished = by_status[JobStatus.SUCCEEDED] + by_status[JobStatus.DEAD]
    success_rate = by_status[JobStatus.SUCCEEDED] / finished if finished else None
    return {
        "reportType": "jobs_summary",
        "from": date_from.isoformat() if date_from else None,
        "to": date_to.isoformat() if date_to else None,
        "generatedAt": generated_at.isoformat(),
        "total": total,
        "successRate": _round(success_rate),
        "byStatus": by_status,
        "byType": dict(sorted(by_type.items())),
        "byPriority": by_priority,
        "runtimeSeconds": {
            "count": runtime.count,
            "mean": _round(runtime.mean_seconds),
            "p95": _round(runtime.p95_seconds),
        },
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def summary_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The summary as ``[section, key, value]`` rows."""
    rows: list[list[str]] = [
        ["range", "from", _cell(summary["from"])],
        ["range", "to", _cell(summary["to"])],
        ["summary", "total", _cell(summary["total"])],
        ["summary", "success_rate", _cell(summary["successRate"])],
    ]
    for section, key in (("status", "byStatus"), ("type", "byType"), ("priority", "byPriority")):
        rows.extend([section, name, _cell(count)] for name, count in summary[key].items())
    runtime = summary["runtimeSeconds"]
    rows.extend(
        [
            ["runtime", "count", _cell(runtime["count"])],
            ["runtime", "mean_seconds", _cell(runtime["mean"])],
            ["runtime", "p95_seconds", _cell(runtime["p95"])],
        ]
    )
    return rows


def render(summary: dict[str, Any], report_format: ReportFormat) -> bytes:
    if report_format == "json":
        return orjson.dumps(summary, option=orjson.OPT_INDENT_2)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["section", "key", "value"])
    writer.writerows(summary_rows(summary))
    return buffer.getvalue().encode()
