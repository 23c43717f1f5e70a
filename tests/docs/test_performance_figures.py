"""The README's performance line quotes the latest figures of docs/performance.md: the same
date and the same four medians (single requests vs Celery and a batch vs Dramatiq, on empty
stores and with history), so neither can move without the other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
README_LINE = re.compile(
    r"the latest, (?P<date>\d{4}-\d\d-\d\d)[^:]*: (?P<single>[\d.]+)x Celery on single\s+"
    r"requests, (?P<batch>[\d.]+)x Dramatiq on a batch; with history (?P<single_history>[\d.]+)x"
    r" and (?P<batch_history>[\d.]+)x\)"
)
LATEST = re.compile(r"^### (?P<date>\d{4}-\d\d-\d\d)[^\n]*\n(?P<body>.*?)(?=^### )", re.S | re.M)
ROW = re.compile(
    r"^\| (?P<name>single requests vs Celery|batch vs Dramatiq) "
    r"\| \*\*(?P<empty>[\d.]+)x\*\*[^|]*\| \*\*(?P<history>[\d.]+)x\*\*",
    re.M,
)


def readme_figures(text: str) -> dict[str, str]:
    match = README_LINE.search(" ".join(text.split()))
    assert match, "the README's performance line is not in its usual words"
    return match.groupdict()


def latest_figures(text: str) -> dict[str, str]:
    figures = text.split("## Figures", 1)[1]
    latest = LATEST.search(figures)
    assert latest, "docs/performance.md has no dated figures section"
    rows = {row["name"]: row for row in ROW.finditer(latest["body"])}
    single, batch = rows["single requests vs Celery"], rows["batch vs Dramatiq"]
    return {
        "date": latest["date"],
        "single": single["empty"],
        "batch": batch["empty"],
        "single_history": single["history"],
        "batch_history": batch["history"],
    }


def test_the_readme_quotes_the_latest_figures() -> None:
    readme = (ROOT / "README.md").read_text()
    performance = (ROOT / "docs" / "performance.md").read_text()
    assert readme_figures(readme) == latest_figures(performance)


def test_a_stale_readme_line_is_noticed() -> None:
    performance = (ROOT / "docs" / "performance.md").read_text()
    stale = (
        "(the latest, 2026-12-01 at INFO logs: 1.07x Celery on single requests, 0.62x Dramatiq"
        " on a batch; with history 1.10x and 0.48x)"
    )
    assert readme_figures(stale) != latest_figures(performance)
