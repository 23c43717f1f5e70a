"""docs/client.md's method tables name each method's parameters as the code does: a call
written from the docs works (``wait(job_ids)``, ``get_schedule(schedule_id)``, ...)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from jobs_client import JobsClient

pytestmark = pytest.mark.unit

DOC = Path(__file__).resolve().parents[4] / "docs" / "client.md"
# A documented call in a table's first cell: `name(params)`.
CALL = re.compile(r"`([a-z_]+)\(([^`]*)\)`")


def documented_calls() -> list[tuple[str, list[str]]]:
    """The calls of the client's own tables (before "## Queues", whose table is
    ``jobs.queues``'s)."""
    calls = []
    for line in DOC.read_text().split("\n## Queues")[0].splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split(" | ")[0]
        for name, params in CALL.findall(first_cell):
            if callable(getattr(JobsClient, name, None)):
                calls.append((name, parameter_names(params)))
    return calls


def parameter_names(params: str) -> list[str]:
    """``a, b=None, *, c=2, **filters`` -> ``[a, b, c, filters]``."""
    names = []
    for part in params.split(","):
        name = part.split("=")[0].strip().lstrip("*")
        if name:
            names.append(name)
    return names


def test_the_docs_table_names_jobs_client_s_methods_and_parameters_as_the_code() -> None:
    calls = documented_calls()
    assert len(calls) >= 20, calls  # the table is read: submit, get, wait, schedules, ...
    wrong = {}
    for name, documented in calls:
        actual = [p for p in inspect.signature(getattr(JobsClient, name)).parameters if p != "self"]
        if documented != actual:
            wrong[name] = (documented, actual)
    assert wrong == {}
