"""docs/client.md's method tables name each method's parameters as the code does: a call
written from the docs works (``wait(job_ids)``, ``get_schedule(schedule_id)``, ...)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import jobs_client
from jobs_client import JobsClient

pytestmark = pytest.mark.unit

DOC = Path(__file__).resolve().parents[4] / "docs" / "client.md"
# A documented call in a table's first cell: `name(params)`.
CALL = re.compile(r"`([a-z_]+)\(([^`]*)\)`")


def section(title: str) -> str:
    """The text of the section ``## <title>...``, up to the next one."""
    for part in DOC.read_text().split("\n## ")[1:]:
        if part.startswith(title):
            return part
    raise AssertionError(f"docs/client.md has no section {title!r}")


def documented_calls(text: str) -> list[tuple[str, str, list[str]]]:
    """The calls in the first cells of a section's tables: ``(name, the cell, params)``."""
    calls = []
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split(" | ")[0]
        for name, params in CALL.findall(first_cell):
            calls.append((name, first_cell, parameter_names(params)))
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
    calls = [
        (name, params)
        for name, _, params in documented_calls(section("Methods"))
        if callable(getattr(JobsClient, name, None))
    ]
    assert len(calls) >= 20, calls  # the table is read: submit, get, wait, schedules, ...
    wrong = {}
    for name, documented in calls:
        actual = [p for p in inspect.signature(getattr(JobsClient, name)).parameters if p != "self"]
        if documented != actual:
            wrong[name] = (documented, actual)
    assert wrong == {}


# The typed-usage table names its calls bare; the cell says whose they are.
TYPED: dict[str, Callable[..., Any]] = {
    "task": jobs_client.task,
    "task_of": jobs_client.task_of,
    "chain": jobs_client.chain,
    "group": jobs_client.group,
    "chord": jobs_client.chord,
    "s": jobs_client.Task.s,
    "then": jobs_client.Canvas.then,
}
HANDLES = {
    "(`JobHandle`": (jobs_client.JobHandle, jobs_client.AsyncJobHandle),
    "(`BatchHandle`": (jobs_client.BatchHandle, jobs_client.AsyncBatchHandle),
}


def test_the_typed_usage_table_names_the_calls_and_parameters_as_the_code() -> None:
    wrong = {}
    checked = 0
    for name, cell, documented in documented_calls(section("Typed tasks")):
        owners = [kinds for mark, kinds in HANDLES.items() if mark in cell]
        if owners:  # a handle's method: the sync and the async handle alike
            functions = [getattr(kind, name) for kind in owners[0]]
        else:
            assert name in TYPED, f"the typed-usage table names an unknown call: {cell}"
            functions = [TYPED[name]]
        for function in functions:
            actual = [p for p in inspect.signature(function).parameters if p != "self"]
            checked += 1
            if documented != actual:
                wrong[f"{function.__qualname__}"] = (documented, actual)
    assert checked >= 15  # task, s, chain, group, then, chord, and each handle's methods
    assert wrong == {}
