"""The layering rules of docs/architecture.md, as import-linter contracts (pyproject.toml):
services never import each other, jobs_common imports no service, within a service api over
adapters over domain, the client SDK and the handler SDK stand alone, no production code uses
the test support."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path, *, pythonpath: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else dict(os.environ)
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_code_keeps_every_contract() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(contracts['contracts'])} kept, 0 broken." in run.stdout


def test_the_contracts_find_each_kind_of_violation(tmp_path: Path) -> None:
    """The same contracts over a stand-in tree with one violation of each kind: every one of
    them is reported (the contracts are not vacuous, whatever the real tree holds)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    violations = {
        "jobs_dashboard/reads.py": "import jobs_scheduler.loops\n",  # a service imports another
        "jobs_common/helpers.py": "import jobs_worker\n",  # the shared library imports a service
        "jobs_dashboard/domain/rules.py": "import jobs_dashboard.api.routes\n",  # domain -> api
        "jobs_dashboard/adapters/rows.py": "import jobs_dashboard.app.cases\n",  # adapters -> app
        "jobs_client/calls.py": "import jobs_common\n",  # the client needs the platform
        "jobs_worker/probe.py": "import jobs_testing\n",  # production code uses test support
        "jobs_sdk/context.py": "import jobs_common\n",  # the handler SDK needs the platform
    }
    for package in contracts["root_packages"]:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for sub in (
        "jobs_dashboard/api",
        "jobs_dashboard/app",
        "jobs_dashboard/adapters",
        "jobs_dashboard/domain",
        "jobs_scheduler",
    ):
        (tmp_path / sub).mkdir(exist_ok=True)
        (tmp_path / sub / "__init__.py").write_text("")
    (tmp_path / "jobs_scheduler" / "loops.py").write_text("")
    (tmp_path / "jobs_dashboard" / "api" / "routes.py").write_text("")
    (tmp_path / "jobs_dashboard" / "app" / "cases.py").write_text("")
    for path, source in violations.items():
        (tmp_path / path).write_text(source)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    run = lint_imports(tmp_path, pythonpath=str(tmp_path))
    assert run.returncode == 1, run.stdout + run.stderr
    # the layers contract is one, broken twice (domain -> api, adapters -> app)
    assert f"Contracts: 0 kept, {len(contracts['contracts'])} broken." in run.stdout, run.stdout
    assert "jobs_dashboard.domain is not allowed to import jobs_dashboard.api" in run.stdout
    assert "jobs_dashboard.adapters is not allowed to import jobs_dashboard.app" in run.stdout
