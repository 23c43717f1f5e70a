"""docker-compose.yml validates against the Compose Specification's JSON schema, vendored in
infra/docker/compose-spec/ (its README says where it came from)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any

import jsonschema
import pytest

from .deploy_files import SCHEMA_DIR, interpolate, load_compose, read_env_file

pytestmark = pytest.mark.unit

SCHEMA_FILE = SCHEMA_DIR / "compose-spec.json"


def schema() -> dict[str, Any]:
    document = json.loads(SCHEMA_FILE.read_text())
    assert isinstance(document, dict)
    return document


def schema_errors(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema())
    return [
        f"{'/'.join(str(part) for part in error.absolute_path)}: {error.message}"
        for error in validator.iter_errors(document)
    ]


def test_the_vendored_schema_is_the_one_its_readme_names() -> None:
    readme = (SCHEMA_DIR / "README.md").read_text()
    digest = re.search(r"sha256 ([0-9a-f]{64})", readme)
    assert digest, "the README records the schema's sha256"
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == digest[1]
    jsonschema.Draft202012Validator.check_schema(schema())


def test_compose_file_as_written_matches_the_schema() -> None:
    assert schema_errors(load_compose()) == []


def test_compose_file_interpolated_matches_the_schema() -> None:
    """What Compose validates: the file with its variables substituted (.env.example)."""
    assert schema_errors(interpolate(load_compose(), read_env_file())) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("services", "gateway", "helthcheck"), {"test": ["CMD", "true"]}),
        (("services", "worker", "depends_on", "rabbitmq", "condition"), "service_ready"),
        (("services", "scheduler", "ports"), "8080:8080"),
        (("volumes", "postgres-data"), "a string"),
    ],
)
def test_schema_check_rejects_a_broken_file(path: tuple[str, ...], value: object) -> None:
    document = copy.deepcopy(load_compose())
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert schema_errors(document) != []
