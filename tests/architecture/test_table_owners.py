"""One writing service per table of the job store (docs/architecture.md, "Tables: owner and
readers"): no service's source writes a table another service owns (an INSERT, UPDATE or
DELETE statement naming it), and the doc's table names each owner. The writes still to move
(issue 21) are listed in PENDING; one that disappears must leave the list too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobs_common.jobstore import metadata

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("gateway", "submission", "scheduler", "dashboard", "worker")
OWNERS: dict[str, str] = {table: "scheduler" for table in metadata.tables}
# Writes by a service that does not own the table, still to move to the owner.
PENDING: set[tuple[str, str]] = set()
WRITE = re.compile(
    r"\b(?:insert|update|delete|insert_into)\(\s*(\w+)\s*[,)]"
    r"|\b(\w+)\.(?:insert|update|delete)\(\)"
)


def written_tables(source: str) -> set[str]:
    return {a or b for a, b in WRITE.findall(source)} & set(metadata.tables)


def writes_by_service() -> set[tuple[str, str]]:
    found = set()
    for service in SERVICES:
        for path in (ROOT / "services" / service / "src").rglob("*.py"):
            if "migrations" in path.parts:
                continue
            found |= {(service, table) for table in written_tables(path.read_text())}
    return found


def test_the_writes_are_recognised() -> None:
    assert written_tables("insert(schedules).values(x=1)") == {"schedules"}
    assert written_tables("update(dead_letters)\n.where(...)") == {"dead_letters"}
    assert written_tables("jobs.update()") == {"jobs"}
    assert written_tables("EVENTS.insert_into(job_events)") == {"job_events"}
    assert written_tables("select(schedules)") == set()


def test_no_service_writes_a_table_another_owns() -> None:
    found = writes_by_service()
    strangers = {(service, table) for service, table in found if OWNERS[table] != service}
    assert strangers - PENDING == set(), "writes to another service's table"
    assert PENDING - strangers == set(), "moved to the owner: take it off PENDING"


def test_the_doc_names_each_tables_owner() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = {
        name: cells[1].strip()
        for line in doc.splitlines()
        if line.startswith("| `")
        for cells in [line.strip("|").split("|")]
        for name in re.findall(r"`(\w+)`", cells[0])
    }
    for table, owner in OWNERS.items():
        assert table in rows, f"{table} is not in docs/architecture.md's table"
        if rows[table].startswith("**today"):  # the doc says the owner does not write it yet
            assert table in {pending for _, pending in PENDING}, table
        else:
            assert rows[table].startswith(owner), f"{table}: {rows[table]}"
