"""One writer of ``jobs.status``: ``adapters/status.py``.

The scheduler's source is scanned (``ast``) for anything that writes the column: an
``update(jobs)`` / ``jobs.update()`` whose values name ``status`` or cannot be seen (``**``,
a variable, no ``.values`` in the same expression), an ``insert(jobs)`` / ``jobs.insert()`` /
``ArrayRows.insert_into(jobs)`` (a new row has a status), raw SQL ``UPDATE jobs ... SET ...
status`` or ``INSERT INTO jobs``, and ``.move(...)`` (an event recorded without the write).
Only the writer may have any; ``recording.py`` may insert new jobs (a new row is not a change
of status; its moves are recorded by the writer), and ``archive.py`` load archived jobs back
as they were. The scanner itself is tested on snippets,
so a scan that finds nothing is known to be able to find something.
"""

from __future__ import annotations

import ast
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import jobs_scheduler
from jobs_common.contracts import JobStatus
from jobs_scheduler.adapters.status import Transition, Write, check
from jobs_scheduler.domain.transitions import IllegalTransition

pytestmark = pytest.mark.unit

PACKAGE = Path(jobs_scheduler.__file__).parent
WRITER = "adapters/status.py"
# The insert of new jobs, with their first status; the archive loader's insert of pruned jobs
# as they were (``python -m jobs_scheduler.archive load``, for inspection: no job moves).
ALLOWED = {("adapters/recording.py", "insert"), ("adapters/archive.py", "insert")}

RAW_UPDATE = re.compile(r"\bupdate\s+(\w+\.)?jobs\b.*\bset\b.*\bstatus\b", re.I | re.S)
RAW_INSERT = re.compile(r"\binsert\s+into\s+(\w+\.)?jobs\b", re.I)
VALUES = {"values", "ordered_values"}


@dataclass(frozen=True)
class Finding:
    line: int
    kind: str  # "update", "insert", "raw_sql" or "event"
    what: str


def _jobs_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to the jobs table, and names bound to the jobstore module."""
    tables, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "jobs_common.jobstore":
            tables |= {a.asname or a.name for a in node.names if a.name == "jobs"}
        elif isinstance(node, ast.ImportFrom) and node.module == "jobs_common":
            modules |= {a.asname or a.name for a in node.names if a.name == "jobstore"}
        elif isinstance(node, ast.Import):
            modules |= {
                a.asname for a in node.names if a.name == "jobs_common.jobstore" and a.asname
            }
    return tables, modules


def status_writes(source: str) -> list[Finding]:
    """Every place in ``source`` that writes ``jobs.status``, or might."""
    tree = ast.parse(source)
    tables, modules = _jobs_names(tree)

    def is_jobs(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in tables
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "jobs"
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        )

    def root_kind(call: ast.Call) -> str | None:
        """ "update" / "insert" when ``call`` starts a write statement on jobs."""
        func = call.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in ("update", "insert") and call.args and is_jobs(call.args[0]):
            return name  # update(jobs), sa.update(jobs), postgresql.insert(jobs)
        if isinstance(func, ast.Attribute) and func.attr in ("update", "insert"):
            if is_jobs(func.value):
                return func.attr  # jobs.update(), jobs.insert()
        if isinstance(func, ast.Attribute) and func.attr == "insert_into":
            if call.args and is_jobs(call.args[0]):
                return "insert"  # ArrayRows.insert_into(jobs)
        return None

    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def chained_values(root: ast.Call) -> list[ast.Call]:
        """The ``.values(...)`` calls chained on ``root`` in the same expression."""
        found, node = [], root
        while True:
            attribute = parents.get(node)
            call = parents.get(attribute) if isinstance(attribute, ast.Attribute) else None
            if not isinstance(call, ast.Call) or call.func is not attribute:
                return found
            if attribute.attr in VALUES:
                found.append(call)
            node = call

    def sets_status(call: ast.Call) -> str | None:
        for keyword in call.keywords:
            if keyword.arg is None:
                return "values(**...) cannot be checked"
            if keyword.arg == "status":
                return "values(status=...)"
        for arg in call.args:
            if not isinstance(arg, ast.Dict):
                return "values(<not a literal>) cannot be checked"
            for key in arg.keys:
                if key is None:
                    return "values({**...}) cannot be checked"
                if isinstance(key, ast.Constant) and key.value == "status":
                    return 'values({"status": ...})'
                if isinstance(key, ast.Attribute) and key.attr == "status":
                    return "values({jobs.c.status: ...})"
        return None

    findings: list[Finding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            kind = root_kind(node)
            if kind == "insert":
                findings.append(Finding(node.lineno, "insert", "a new jobs row"))
            elif kind == "update":
                values = chained_values(node)
                if not values:
                    findings.append(Finding(node.lineno, "update", "values not visible"))
                for call in values:
                    if (what := sets_status(call)) is not None:
                        findings.append(Finding(node.lineno, "update", what))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "move":
                findings.append(Finding(node.lineno, "event", "a move recorded by hand"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if RAW_UPDATE.search(node.value) or RAW_INSERT.search(node.value):
                findings.append(Finding(node.lineno, "raw_sql", node.value[:60]))
    return findings


def test_only_the_status_writer_writes_jobs_status() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert PACKAGE / WRITER in sources
    elsewhere = {
        (str(path.relative_to(PACKAGE)), finding)
        for path in sources
        if str(path.relative_to(PACKAGE)) != WRITER
        for finding in status_writes(path.read_text())
    }
    assert {(path, f) for path, f in elsewhere if (path, f.kind) not in ALLOWED} == set()
    # The allowed insert is still there (else this test scans the wrong thing).
    assert {(path, f.kind) for path, f in elsewhere} == ALLOWED


def test_the_writer_is_found_by_the_scan() -> None:
    kinds = {f.kind for f in status_writes((PACKAGE / WRITER).read_text())}
    assert kinds == {"update", "event"}


HEAD = "from jobs_common.jobstore import jobs, job_attempts\nfrom jobs_common import jobstore\n"


@pytest.mark.parametrize(
    ("snippet", "kind"),
    [
        ("update(jobs).where(jobs.c.id == 1).values(status='dead')", "update"),
        ("sa.update(jobs).values(lease_expires_at=None).values(status=s)", "update"),
        ("jobs.update().where(x).values(status=S.DEAD.value)", "update"),
        ("update(jobstore.jobs).values(status='x')", "update"),
        ("update(jobs).values(**values)", "update"),
        ("update(jobs).values(values)", "update"),
        ("update(jobs).values({'status': 'x'})", "update"),
        ("update(jobs).values({jobs.c.status: 'x'})", "update"),
        ("statement = update(jobs).where(jobs.c.id == i)", "update"),
        ("insert(jobs).values(id=1)", "insert"),
        ("jobs.insert()", "insert"),
        ("ROWS.insert_into(jobs, json=('payload',))", "insert"),
        ("text('UPDATE jobs SET attempt = 2, status = :s WHERE id = :i')", "raw_sql"),
        ("text('''update public.jobs\n set status = 'dead' ''')", "raw_sql"),
        ("text('INSERT INTO jobs (id, status) VALUES (1, 2)')", "raw_sql"),
        ("changes.move(job_id, 1, S.QUEUED, S.RUNNING, 'started')", "event"),
    ],
)
def test_the_scan_finds_a_writer(snippet: str, kind: str) -> None:
    assert [f.kind for f in status_writes(HEAD + snippet)] == [kind]


def test_an_aliased_table_is_still_the_jobs_table() -> None:
    source = "from jobs_common.jobstore import jobs as j\nupdate(j).values(status='x')"
    assert [f.kind for f in status_writes(source)] == ["update"]


@pytest.mark.parametrize(
    "snippet",
    [
        "update(jobs).where(jobs.c.status == 'running').values(lease_expires_at=None)",
        "update(jobs).where(jobs.c.id == any_of('ids', T)).values(queued_at=func.now())",
        "update(job_attempts).where(x).values(status='running')",
        "insert(job_attempts).values(status='queued')",
        "select(jobs.c.status).where(jobs.c.status.in_(['queued']))",
        "text('SELECT status FROM jobs WHERE id = :i')",
        "text('UPDATE job_attempts SET status = :s')",
        "log.info('moved', extra={'status': 'dead'})",
    ],
)
def test_the_scan_leaves_other_writes_alone(snippet: str) -> None:
    assert status_writes(HEAD + snippet) == []


def test_a_write_may_not_set_the_status() -> None:
    with pytest.raises(ValueError, match="writer's"):
        Write("sneaky", sets=lambda r: {"status": "dead"})


JOB = uuid.UUID(int=1)
S = JobStatus


@pytest.mark.parametrize(
    "move",
    [
        Transition(JOB, S.SUCCEEDED, S.QUEUED, "no way out of succeeded"),
        Transition(JOB, S.RUNNING, S.SCHEDULED, "running -> scheduled needs failed between"),
        Transition(JOB, S.RUNNING, S.SCHEDULED, "bad step", via=((S.QUEUED, "back"),)),
        Transition(JOB, S.BLOCKED, S.SCHEDULED, "later", via=((S.RUNNING, "never"),)),
    ],
)
def test_an_illegal_move_is_refused_before_anything_is_written(move: Transition) -> None:
    with pytest.raises(IllegalTransition):
        check([move])


def test_steps_go_through_via_in_order() -> None:
    move = Transition(JOB, S.RUNNING, S.SCHEDULED, "retry in 50 ms", via=((S.FAILED, "boom"),))
    check([move])
    assert move.steps() == [
        (S.RUNNING, S.FAILED, "boom"),
        (S.FAILED, S.SCHEDULED, "retry in 50 ms"),
    ]


@pytest.mark.parametrize(
    "attempts",
    [(1, 1), (None, None), (None, 1), (1, None)],
)
def test_one_job_attempt_moves_once_per_write(attempts: tuple[int | None, int | None]) -> None:
    moves = [Transition(JOB, S.QUEUED, S.RUNNING, "started", attempt=a) for a in attempts]
    with pytest.raises(ValueError, match="twice"):
        check(moves)


def test_two_attempts_of_one_job_may_share_a_write() -> None:
    # A batch may hold a late running message of an old attempt: the fence picks one.
    check([Transition(JOB, S.QUEUED, S.RUNNING, "started", attempt=a) for a in (1, 2)])
