"""The public API contract: assembled from the backends' schemas at the gateway's paths,
committed, and kept current (``make openapi`` regenerates it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jobs_gateway.api.openapi import public_document
from jobs_gateway.domain.routing import FALLBACK_UPSTREAM, ROUTES, resolve

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[4]
METHODS = {"get", "put", "post", "delete", "patch"}


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def test_the_committed_document_is_what_the_code_assembles() -> None:
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts/public_openapi.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]


# The routes an API key may call (docs/tenancy.md): submissions, their status, job types.
KEY_ROUTES = {
    ("post", "/api/jobs"),
    ("post", "/api/batches"),
    ("get", "/api/jobs/{jobId}/status"),
    ("get", "/api/batches/{batchId}/status"),
    ("get", "/api/job-types"),
}


def test_every_api_operation_needs_the_token_and_answers_errors_in_one_shape() -> None:
    document = public_document()
    api = [(p, m, op) for p, m, op in operations(document) if p.startswith("/api/")]
    assert len(api) >= 25
    for path, method, op in api:
        key = [{"apiKey": []}] if (method, path) in KEY_ROUTES else []
        assert op["security"] == [{"bearerAuth": []}, *key], (method, path)
        codes = set(op["responses"])
        assert {"401", "500", "503"} <= codes, (method, path)
        if "{" in path:
            assert "404" in codes, (method, path)
        for code, response in op["responses"].items():
            if code[0] in "45":
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path)


def test_every_reference_resolves_and_nothing_internal_leaks() -> None:
    document = public_document()
    text = json.dumps(document)
    defined = set(document["components"]["schemas"])
    assert set(re.findall(r'"#/components/schemas/([^"]+)"', text)) <= defined
    assert "#/$defs/" not in text and "HTTPValidationError" not in text
    assert "/api/v1/" not in "".join(document["paths"])  # backend paths stay behind the gateway
    assert not any("{path}" in p for p in document["paths"])  # no catch-all
    for _, _, op in operations(document):
        for parameter in op.get("parameters", []):
            assert not parameter["name"].lower().startswith("x-internal"), parameter


def test_each_public_path_routes_to_the_backend_that_documents_it() -> None:
    submission = {(r.method, "/api/" + r.pattern) for r in ROUTES}
    for path, method, _ in operations(public_document()):
        if not path.startswith("/api/"):
            continue
        concrete = re.sub(r"\{[^}]+\}", "00000000-0000-0000-0000-000000000001", path)
        target = resolve(method.upper(), concrete.removeprefix("/api/"))
        expected = "submission" if (method.upper(), path) in submission else FALLBACK_UPSTREAM
        assert target.upstream == expected, (method, path)
