"""One writer of ``job_attempts``: ``adapters/attempts.py`` (docs/scheduler.md, "The status
writer"). The scheduler's source is scanned (``ast``) for every statement that writes the
table: ``update`` / ``insert`` / ``delete`` of it (any spelling), ``ArrayRows.insert_into`` it,
``job_attempts.update()`` and the like, and raw SQL. The scanner is tested on snippets, so a
scan that finds nothing is known to be able to find something."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import jobs_scheduler

pytestmark = pytest.mark.unit

PACKAGE = Path(jobs_scheduler.__file__).parent
WRITER = "adapters/attempts.py"
WRITES = {"update", "insert", "delete"}
RAW = re.compile(r"\b(update|insert\s+into|delete\s+from)\s+(\w+\.)?job_attempts\b", re.I)


def attempt_writes(source: str) -> list[int]:
    """The lines of ``source`` that write ``job_attempts``."""
    tree = ast.parse(source)
    tables, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "jobs_common.jobstore":
            tables |= {a.asname or a.name for a in node.names if a.name == "job_attempts"}
        elif isinstance(node, ast.ImportFrom) and node.module == "jobs_common":
            modules |= {a.asname or a.name for a in node.names if a.name == "jobstore"}

    def is_table(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in tables
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "job_attempts"
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        )

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in (*WRITES, "insert_into") and node.args and is_table(node.args[0]):
                lines.append(node.lineno)  # update(t), sa.delete(t), ROWS.insert_into(t)
            elif isinstance(func, ast.Attribute) and func.attr in WRITES and is_table(func.value):
                lines.append(node.lineno)  # job_attempts.update()
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if RAW.search(node.value):
                lines.append(node.lineno)
    return lines


def test_only_the_attempt_writer_writes_job_attempts() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert PACKAGE / WRITER in sources
    elsewhere = {
        (str(path.relative_to(PACKAGE)), line)
        for path in sources
        if str(path.relative_to(PACKAGE)) != WRITER
        for line in attempt_writes(path.read_text())
    }
    assert elsewhere == set()
    assert len(attempt_writes((PACKAGE / WRITER).read_text())) == 5  # the writer's statements


HEAD = "from jobs_common.jobstore import jobs, job_attempts\nfrom jobs_common import jobstore\n"


@pytest.mark.parametrize(
    "snippet",
    [
        "update(job_attempts).where(x).values(status='running')",
        "sa.update(job_attempts).values(error=None)",
        "insert(job_attempts).values(job_id=1)",
        "delete(jobstore.job_attempts)",
        "job_attempts.update().values(status='x')",
        "ROWS.insert_into(job_attempts).on_conflict_do_nothing()",
        "text('UPDATE job_attempts SET status = :s')",
        "text('insert into public.job_attempts (job_id) values (1)')",
    ],
)
def test_the_scan_finds_a_write(snippet: str) -> None:
    assert len(attempt_writes(HEAD + snippet)) == 1


@pytest.mark.parametrize(
    "snippet",
    [
        "select(job_attempts.c.status).where(job_attempts.c.job_id == 1)",
        "update(jobs).where(jobs.c.id == job_attempts.c.job_id).values(attempt=2)",
        "text('SELECT status FROM job_attempts')",
    ],
)
def test_the_scan_leaves_reads_and_other_tables_alone(snippet: str) -> None:
    assert attempt_writes(HEAD + snippet) == []
