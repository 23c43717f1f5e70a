"""Assemble the public API contract the gateway serves at ``/openapi.json`` and ``/docs``.

Clients see one API on the gateway; its operations are the backends' own (submission and
dashboard), at the paths the gateway's routing table publishes them under, plus the gateway's
own ``/auth`` routes and the ``/api`` routes it serves itself (organizations, projects, API
keys). This script builds each app's OpenAPI document in process (no service
runs), and:

- maps each backend operation to its public path (``jobs_gateway.domain.routing``: the listed
  submission routes, and every other ``/api/...`` route of the dashboard as is);
- moves request-body ``$defs`` into ``components/schemas`` and merges the components (a name
  two documents define differently is an error to fix at the source);
- documents what the gateway adds: bearer authentication on every ``/api`` operation, the
  error envelope for every error status, 401 (token), 404 (an id that is unknown or not
  yours), 500 and 503 (a backend unavailable);
- drops what clients never see (the backends' /health and /ready, the gateway's catch-all).

``python scripts/public_openapi.py`` writes the document (``make openapi``);
``--check`` exits 1 when the committed document differs from what the code assembles now.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from jobs_dashboard.service import create_app as dashboard_app
from jobs_dashboard.settings import Settings as DashboardSettings
from jobs_gateway.domain.routing import ROUTES, RouteRule
from jobs_gateway.service import create_app as gateway_app
from jobs_gateway.settings import Settings as GatewaySettings
from jobs_submission.service import create_app as submission_app
from jobs_submission.settings import Settings as SubmissionSettings

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "services/gateway/src/jobs_gateway/openapi/public.json"

Document = dict[str, Any]
ERROR_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
FASTAPI_VALIDATION = {"HTTPValidationError", "ValidationError"}
METHODS = ("get", "put", "post", "delete", "patch")
GATEWAY_ERRORS = {
    "401": "Missing, invalid or expired bearer token",
    "429": "Too many requests from this user; `Retry-After` gives the seconds to wait",
    "500": "Unexpected error (the message carries no internals)",
    "503": "A backend is unavailable; retry later",
}
NOT_FOUND = "Unknown id, or not yours"
PROJECT_NOT_FOUND = "The project named (X-Project or projectId) is unknown or not yours to see"
PROJECT_BAD = "The project named (X-Project or projectId) is malformed or ambiguous"
KEY_FORBIDDEN = "Your role in the project may not do this, or an API key may not call this route"
X_PROJECT = {
    "name": "X-Project",
    "in": "header",
    "required": False,
    "description": "The project this request acts in and reads: its id, its slug where that "
    "is unique among yours, or <organization slug>/<project slug> (docs/tenancy.md). "
    "Default: your personal default project for writes, all your projects for reads; an API "
    "key's own project.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
}
BAD_PATH = "A path segment the gateway refuses: `.`, `..`, or one holding `/` or `\\` once decoded"
RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds until the limit allows another request",
        "schema": {"type": "integer"},
    }
}
PROXY_PATH = "/api/{path}"  # the gateway's catch-all, proxied to the backends
BEARER_OWN = {("get", "/auth/me")}  # the gateway's own routes that take the access token
VALIDATION = "Validation error: `details` names each field and what is wrong with it"
TOO_LARGE = "Request body above this route's limit (see docs/gateway.md, Limits)"
MALFORMED = "The body could not be parsed (not JSON, or not UTF-8)"
OWNER_FILTER = "submittedBy names another user: only admins may filter by owner"

DESCRIPTION = """\
The public API of the jobs platform. Every `/api` operation needs an access token from
`POST /auth/login` (or `/auth/refresh`) in `Authorization: Bearer <token>`; access tokens last
at most 15 minutes. A project's API key (`X-API-Key`) may submit jobs and batches, read their
status and list job types, in its project. `X-Project` names the project a request acts in.
`POST /auth/refresh` uses up its refresh token and answers the next one: keep it, and never
present a used one again (that ends the session). `POST /auth/logout` ends the session. A
`429` carries `Retry-After` (seconds).
Errors have one shape: `{"error": code, "message": text, "details": [{"field", "message"}]}`
with `code` one of bad_request, unauthorized, forbidden, not_found, conflict,
validation_error, too_many_requests, internal_error, service_unavailable, payload_too_large
(413: a body above its route's limit), method_not_allowed (405, with `Allow`).

Live events: `GET /ws/events?token=<access token>` upgrades to a WebSocket that pushes the
status changes of the jobs you may see and, after `{"type": "subscribe", "jobId": ...}`, a
job's log lines (see docs/gateway.md, "Live events").
"""


def _public_path(rule: RouteRule, backend_path: str) -> str:
    """``/api/<pattern>`` with the backend's own parameter names, in order."""
    names = iter(re.findall(r"\{([^}]+)\}", backend_path))
    return "/api/" + re.sub(r"\{[^}]+\}", lambda _: "{" + next(names) + "}", rule.pattern)


def _hoist_defs(node: Any, found: dict[str, Any]) -> Any:
    """Move nested ``$defs`` into ``found`` and point their references at the components."""
    if isinstance(node, dict):
        for name, schema in node.pop("$defs", {}).items():
            found[name] = _hoist_defs(schema, found)
        return {
            key: (
                value.replace("#/$defs/", "#/components/schemas/")
                if key == "$ref" and isinstance(value, str)
                else _hoist_defs(value, found)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_hoist_defs(item, found) for item in node]
    return node


def _merge_schemas(target: dict[str, Any], source: dict[str, Any], origin: str) -> None:
    for name, schema in source.items():
        if name in FASTAPI_VALIDATION:
            continue
        if name in target and target[name] != schema:
            raise SystemExit(
                f"schema {name!r} from {origin} differs from one already merged: "
                "rename one of the models"
            )
        target[name] = schema


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}


def _own_body(response: Document) -> bool:
    """An error response documented with a body of its own (``/health``'s and ``/ready``'s
    503 reports)."""
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return schema.get("$ref", "").endswith(("/HealthReport", "/ReadyReport"))


def _with_envelopes(operation: Document) -> Document:
    """A copy whose error responses all have the platform's one error shape."""
    op = copy.deepcopy(operation)
    responses: dict[str, Any] = op.setdefault("responses", {})
    for code, response in list(responses.items()):
        if code.startswith(("4", "5")) and not _own_body(response):
            description = VALIDATION if code == "422" else response.get("description", "Error")
            responses[code] = _error(description) | (
                {"headers": response["headers"]} if "headers" in response else {}
            )
    if any(parameter.get("name") == "submittedBy" for parameter in op.get("parameters", [])):
        responses.setdefault("403", _error(OWNER_FILTER))
    if "requestBody" in op:
        responses.setdefault("400", _error(MALFORMED))
        responses.setdefault("413", _error(TOO_LARGE))
    return op


def _public_operation(
    operation: Document, *, path: str, proxied: bool = False, keys: bool = False
) -> Document:
    """A backend operation as a gateway client sees it; ``proxied``: through the gateway's
    project scope (``X-Project``, docs/tenancy.md); ``keys``: an API key may call it."""
    op = _with_envelopes(operation)
    responses: dict[str, Any] = op["responses"]
    if "{" in path:
        responses.setdefault("404", _error(NOT_FOUND))
        responses.setdefault("400", _error(BAD_PATH))
    if proxied:
        op["parameters"] = [*op.get("parameters", []), X_PROJECT]
        responses.setdefault("404", _error(PROJECT_NOT_FOUND))
        responses.setdefault("400", _error(PROJECT_BAD))
        responses.setdefault("403", _error(KEY_FORBIDDEN))
    for code, description in GATEWAY_ERRORS.items():
        responses.setdefault(code, _error(description))
    responses["429"] = responses["429"] | {"headers": RETRY_AFTER}
    op["security"] = [{"bearerAuth": []}, {"apiKey": []}] if keys else [{"bearerAuth": []}]
    op["responses"] = dict(sorted(responses.items()))
    return op


def _operations(document: Document) -> list[tuple[str, str, Document]]:
    return [
        (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def assemble(gateway: FastAPI, submission: FastAPI, dashboard: FastAPI) -> Document:
    # The gateway serves this very document as its openapi(): read its own routes instead.
    own = get_openapi(title=gateway.title, version=gateway.version, routes=gateway.routes)
    schemas: dict[str, Any] = {}
    paths: dict[str, dict[str, Any]] = {}

    def add(path: str, method: str, operation: Document) -> None:
        if method in paths.get(path, {}):
            raise SystemExit(f"{method.upper()} {path} is published twice")
        paths.setdefault(path, {})[method] = operation

    for path, method, operation in _operations(own):
        if path == PROXY_PATH:  # the catch-all proxy is documented by what follows
            continue
        if path.startswith("/api/"):  # served by the gateway itself (organizations, keys)
            add(path, method, _public_operation(operation, path=path))
            continue
        public = _with_envelopes(operation)
        if (method, path) in BEARER_OWN:
            public["security"] = [{"bearerAuth": []}]
        add(path, method, public)
    _merge_schemas(schemas, own.get("components", {}).get("schemas", {}), "gateway")

    routed: set[tuple[str, str]] = set()
    backends = {"submission": submission.openapi(), "dashboard": dashboard.openapi()}
    for rule in ROUTES:
        document = backends[rule.upstream]
        backend_path = _matching_path(document, rule)
        operation = document["paths"][backend_path][rule.method.lower()]
        public_path = _public_path(rule, backend_path)
        public = _public_operation(
            operation, path=public_path, proxied=True, keys=rule.upstream == "submission"
        )
        add(public_path, rule.method.lower(), public)
        routed.add((rule.upstream, f"{rule.method.lower()} {backend_path}"))
    for name, document in backends.items():
        for path, method, operation in _operations(document):
            if (name, f"{method} {path}") in routed or not path.startswith("/api/"):
                continue
            if name != "dashboard":
                raise SystemExit(f"{method.upper()} {path} of {name} has no public route")
            add(path, method, _public_operation(operation, path=path, proxied=True))
        _merge_schemas(schemas, document.get("components", {}).get("schemas", {}), name)

    hoisted: dict[str, Any] = {}
    paths = _hoist_defs(paths, hoisted)
    _merge_schemas(schemas, hoisted, "request bodies")
    return {
        "openapi": own["openapi"],
        "info": {"title": "Jobs platform API", "version": own["info"]["version"]},
        "description": DESCRIPTION,
        "paths": {path: paths[path] for path in sorted(paths)},
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "apiKey": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-API-Key",
                    "description": "A project's API key (also as `Authorization: Bearer jk_...`)",
                },
            },
        },
    }


def _matching_path(document: Document, rule: RouteRule) -> str:
    """The backend path that ``rule.target`` names (parameter names may differ)."""
    shape = re.sub(r"\{[^}]+\}", "{}", rule.target)
    for path, item in document["paths"].items():
        if re.sub(r"\{[^}]+\}", "{}", path) == shape and rule.method.lower() in item:
            return str(path)
    raise SystemExit(f"no {rule.method} {rule.target} in the {rule.upstream} API")


def build() -> str:
    document = assemble(
        gateway_app(GatewaySettings()),
        submission_app(SubmissionSettings()),
        dashboard_app(DashboardSettings()),
    )
    document["info"]["description"] = document.pop("description")
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the file is stale")
    args = parser.parse_args()
    text = build()
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    text.splitlines(keepends=True),
                    str(OUTPUT),
                    "assembled now",
                    n=2,
                )
            )
            print(f"\n{OUTPUT} is stale: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
