"""One registry of types (issue 34, point 6): the built-in types' payload models are defined
once, in the worker (``jobs_worker/handlers/payloads.py``), announced like any team's, and
nothing else in the repository restates them: no other class of those names, no table of
payload models, no service validating a built-in type by a model of its own.

The web console builds every payload form from the schema ``GET /api/job-types`` lists, the
built-in types' as any other: no source of frontend/src names a built-in type or one of its
payload fields (its tests and test support aside, whose fixture of the announced schemas is
checked here against what the worker announces)."""

from __future__ import annotations

import importlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
THE_DEFINITION = ROOT / "services/worker/src/jobs_worker/handlers/payloads.py"
MODELS = ("EmailPayload", "ImageResizePayload", "ReportPayload", "SimulatePayload")
PYTHON_TREES = ("services", "libs", "clients", "examples", "scripts", "tests")
CLASS = re.compile(r"^\s*class\s+(" + "|".join(MODELS) + r")\b", re.M)
FRONTEND_SRC = ROOT / "frontend/src"
# The console's tests and their support (fixtures, helpers) may name the built-in types.
FRONTEND_TEST_SUPPORT = FRONTEND_SRC / "test"
SCHEMAS_FIXTURE = FRONTEND_TEST_SUPPORT / "builtinPayloadSchemas.json"


def builtin_handler_modules() -> dict[str, str]:
    """The built-in types and their modules (the worker's ``jobs_platform.handlers``)."""
    project = tomllib.loads((ROOT / "services/worker/pyproject.toml").read_text())["project"]
    modules: dict[str, str] = project["entry-points"]["jobs_platform.handlers"]
    return modules


def announced_payload_schemas() -> dict[str, Any]:
    """What the worker announces for each built-in type (``payloadSchema``)."""
    from jobs_sdk.declare import spec_of
    from jobs_worker.app.announce import type_info

    schemas: dict[str, Any] = {}
    for module_name in builtin_handler_modules().values():
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            spec = spec_of(value)
            if spec is not None and spec.module == module_name:
                schemas[spec.job_type] = type_info(spec).payload_schema
    return schemas


def builtin_names() -> re.Pattern[str]:
    """What only a form or a check written for a built-in type spells: a built-in type's name
    as a string, or one of its payload fields whose name says whose it is (camelCase or
    snake_case: ``imageBase64``, ``minSeconds``...; ``to`` or ``body`` say nothing). ``email``
    is left out: it is also a JSON Schema format and an input type the generic form uses."""
    types = set(builtin_handler_modules()) - {"email"}
    fields = {
        name
        for schema in announced_payload_schemas().values()
        for name in schema["properties"]
        if re.search(r"[A-Z_]", name)
    }
    return re.compile(
        r"(['\"`])(" + "|".join(sorted(types)) + r")\1"
        r"|\b(" + "|".join(sorted(fields | {t for t in types if "_" in t})) + r")\b"
    )


def python_sources() -> list[Path]:
    found = []
    for tree in PYTHON_TREES:
        for path in (ROOT / tree).rglob("*.py"):
            if not {".venv", "node_modules", "build"} & set(path.parts):
                found.append(path)
    return found


def test_the_builtin_payload_models_are_defined_once_in_the_worker() -> None:
    defined = {
        (str(path.relative_to(ROOT)), name)
        for path in python_sources()
        for name in CLASS.findall(path.read_text(encoding="utf-8"))
    }
    assert defined == {(str(THE_DEFINITION.relative_to(ROOT)), name) for name in MODELS}


def test_no_service_but_the_worker_names_a_builtin_payload_model() -> None:
    """The submission service and the dashboard validate every type from the registry."""
    naming = sorted(
        str(path.relative_to(ROOT))
        for service in ("gateway", "submission", "scheduler", "dashboard")
        for path in (ROOT / "services" / service / "src").rglob("*.py")
        if re.search(r"\b(PAYLOAD_MODELS|" + "|".join(MODELS) + r")\b", path.read_text())
    )
    assert naming == []
    common = (ROOT / "libs/common/src/jobs_common/payloads.py").read_text()
    assert not re.search(r"\bclass\s+\w+\(", common)  # platform-wide rules only


def frontend_sources() -> list[Path]:
    return [
        path
        for pattern in ("*.ts", "*.tsx")
        for path in FRONTEND_SRC.rglob(pattern)
        if "node_modules" not in path.parts
        and FRONTEND_TEST_SUPPORT not in path.parents
        and not path.name.endswith((".test.ts", ".test.tsx", ".d.ts"))
    ]


def test_the_console_names_no_builtin_type_nor_its_fields() -> None:
    """Every form is built from the schema the registry lists; the type list is the registry's."""
    names = builtin_names()
    spelling = {
        f"{path.relative_to(FRONTEND_SRC)}: {match.group(0)}"
        for path in frontend_sources()
        for match in names.finditer(path.read_text(encoding="utf-8"))
    }
    assert spelling == set()


def test_the_names_check_finds_what_a_hand_written_form_would_spell() -> None:
    names = builtin_names()
    for written in (
        "const JOB_TYPES = ['email', 'image_resize'];",
        "const LABELS = { 'simulate': 'Simulate (demo)' };",
        'if (type === "simulate") return;',
        "case `report_generation`:",
        "values.minSeconds",
        '<input name="imageBase64" />',
        "report_generation",
    ):
        assert names.search(written), written
    for generic in (
        '<input type="email" />',
        "format: 'email'",
        "case 'email':",
        "payload.to",
        "simulated",
    ):
        assert not names.search(generic), generic


def test_the_consoles_fixture_is_what_the_worker_announces() -> None:
    """The console's tests read the built-in types' schemas from a fixture: the announced ones
    (rewrite it as ``json.dumps(announced_payload_schemas(), indent=2)``)."""
    fixture = json.loads(SCHEMAS_FIXTURE.read_text(encoding="utf-8"))
    assert fixture == announced_payload_schemas()
