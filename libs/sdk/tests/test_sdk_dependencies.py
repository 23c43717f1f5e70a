"""The SDK is light: it imports the standard library, pydantic and itself, nothing else, and
declares pydantic as its one dependency (a team's handler package depends on it alone)."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jobs_sdk"
ALLOWED = {"pydantic", "pydantic_core", "jobs_sdk"} | set(sys.stdlib_module_names)


def imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.partition(".")[0])
    return roots


def test_the_sdk_imports_only_pydantic_and_the_standard_library() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 6
    foreign = {
        f"{path.name}: {root}"
        for path in modules
        for root in imported_roots(path.read_text())
        if root not in ALLOWED
    }
    assert not foreign


def test_the_check_sees_a_foreign_import() -> None:
    assert imported_roots("import orjson\nfrom jobs_common.contracts import JobError\n") == {
        "orjson",
        "jobs_common",
    }


def test_pydantic_is_the_one_declared_dependency() -> None:
    project = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text())["project"]
    assert [d.split(">")[0] for d in project["dependencies"]] == ["pydantic"]
