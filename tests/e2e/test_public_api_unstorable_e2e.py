"""Every operation of the gateway's public OpenAPI, against the running stack, with text the
stores cannot hold in each string it takes: a NUL (U+0000), a lone surrogate (``\\ud800``)
and a value over every documented limit, in each path and query parameter, in each header
parameter (over-long only: HTTP cannot carry the others), in each string of the body and as
an object key at every level of it. None may answer 5xx, none 2xx; every refusal is in the
error envelope (docs/api.md, "Text the platform refuses").

Schemathesis (public_api_fuzzing.py) generates valid and invalid input at random; this
sweep tries these values everywhere, deterministically, in a few hundred requests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PLACEHOLDER = "__unstorable__"
# Raw JSON string literals, as a client writes them.
BODY_VALUES = {
    "nul": '"a\\u0000b"',
    "surrogate": '"x\\ud800y"',
    "over-long": orjson.dumps("x" * 300_000).decode(),  # past 256 KiB and any field's bound
}
# Percent-encoded, as a URL carries them (a surrogate encoded as UTF-8 bytes is not UTF-8).
URL_VALUES = {"nul": "a%00b", "surrogate": "x%ED%A0%80y", "over-long": "x" * 3_000}
# The gateway replaces a client's invalid X-Trace-Id by its own (docs/gateway.md): never
# stored, so an over-long one is ignored rather than refused.
IGNORED_HEADERS = {"X-Trace-Id"}


def soon() -> str:
    return (datetime.now(UTC) + timedelta(hours=1)).isoformat()


def bodies() -> dict[tuple[str, str], Any]:
    """A well-formed body for each operation that takes one, with every string field."""
    reason = {"reason": "why"}
    job = {
        "type": "simulate",
        "priority": 2,
        "payload": {"minSeconds": 0, "maxSeconds": 0},
        "submittedBy": "admin@test.com",
        "runAt": soon(),
        "retryPolicy": "fast",
        "queue": "default",
    }
    template = {
        "type": "simulate",
        "priority": 1,
        "payload": {"minSeconds": 0, "maxSeconds": 0},
        "retryPolicyName": "fast",
    }
    queue_settings = {
        "rateLimit": {"limit": 5, "per": "second"},
        "concurrencyKey": {"field": "customerId", "limit": 1},
        "defaultRetryPolicy": "fast",
    }
    return {
        ("post", "/api/jobs"): job,
        ("post", "/api/batches"): {"name": "batch", "jobs": [{**job, "ref": "a"}]},
        ("post", "/api/jobs/{jobId}/cancel"): reason,
        ("post", "/api/dead-letters/{deadLetterId}/discard"): reason,
        ("post", "/api/dead-letters/{deadLetterId}/requeue"): {
            "reason": "why",
            "payload": {"minSeconds": 0, "maxSeconds": 0},
        },
        ("post", "/api/dead-letters/bulk"): {
            "action": "discard",
            "dryRun": True,
            "reason": "why",
            "selector": {"fingerprint": "f", "reason": "r", "jobType": "simulate"},
        },
        ("post", "/api/retry-policies"): {
            "name": f"p-{uuid.uuid4().hex[:8]}",
            "strategy": "fixed",
            "baseDelayMs": 10,
            "multiplier": 1,
            "maxDelayMs": 10,
            "jitter": False,
        },
        ("post", "/api/schedules"): {
            "name": f"s-{uuid.uuid4().hex[:8]}",
            "cron": "0 3 * * *",
            "timezone": "Europe/Berlin",
            "jobTemplate": template,
        },
        ("put", "/api/schedules/by-name/{name}"): {
            "cron": "0 3 * * *",
            "timezone": "Europe/Berlin",
            "jobTemplate": template,
        },
        ("put", "/api/schedules/{scheduleId}"): {
            "cron": "0 3 * * *",
            "timezone": "Europe/Berlin",
            "jobTemplate": template,
        },
        ("post", "/api/queues"): {"name": f"q-{uuid.uuid4().hex[:8]}", **queue_settings},
        ("patch", "/api/queues/{queueId}"): queue_settings,
        ("put", "/api/project-flow/{projectId}"): {"weight": 2},
        ("post", "/api/organizations"): {"name": "Org", "slug": f"o-{uuid.uuid4().hex[:8]}"},
        ("patch", "/api/organizations/{org_id}"): {"name": "Org", "slug": "org"},
        ("post", "/api/organizations/{org_id}/members"): {
            "email": "user@test.com",
            "role": "viewer",
        },
        ("patch", "/api/organizations/{org_id}/members/{user_id}"): {"role": "viewer"},
        ("post", "/api/projects"): {"orgId": str(uuid.uuid4()), "name": "P", "slug": "p"},
        ("patch", "/api/projects/{project_id}"): {"name": "P", "slug": "p"},
        ("post", "/api/projects/{project_id}/api-keys"): {
            "name": "ci",
            "role": "member",
            "expiresAt": soon(),
        },
        ("post", "/auth/login"): {"email": "admin@test.com", "password": "admin123"},
        ("post", "/auth/register"): {"email": "new@example.com", "password": "long-password-1"},
        ("post", "/auth/refresh"): {"refreshToken": "not-a-token"},
        ("post", "/auth/logout"): {"refreshToken": "not-a-token"},
    }


def mutations(body: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(field, body)`` with the placeholder in each string value, and as a new key (and as
    the value of a new key) in each object."""
    if isinstance(body, str):
        yield ".".join(map(str, path)) or "body", PLACEHOLDER
    elif isinstance(body, dict):
        at = ".".join(map(str, path))
        yield f"{at}.<key>", {**body, PLACEHOLDER: 1}
        yield f"{at}.<new>", {**body, "extraField": PLACEHOLDER}
        for key, value in body.items():
            for field, changed in mutations(value, (*path, key)):
                yield field, {**body, key: changed}
    elif isinstance(body, list):
        for index, value in enumerate(body):
            for field, changed in mutations(value, (*path, index)):
                yield field, [*body[:index], changed, *body[index + 1 :]]


def with_value(body: Any, literal: str) -> bytes:
    return orjson.dumps(body).replace(f'"{PLACEHOLDER}"'.encode(), literal.encode())


def string_parameter(parameter: dict[str, Any]) -> bool:
    schema = parameter.get("schema", {})
    options = schema.get("anyOf", [schema])
    return any(o.get("type") == "string" or "$ref" in o for o in options) or not options


def base_parameters(operation: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Path parameters (ids: a uuid) and required query parameters, by location."""
    values: dict[str, dict[str, str]] = {"path": {}, "query": {}}
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            values["path"][parameter["name"]] = str(uuid.uuid4())
        elif parameter["in"] == "query" and parameter.get("required"):
            values["query"][parameter["name"]] = "1"
    return values


def url(path: str, params: dict[str, dict[str, str]]) -> str:
    for name, value in params["path"].items():
        path = path.replace("{" + name + "}", value)
    query = "&".join(f"{name}={value}" for name, value in params["query"].items())
    return f"{path}?{query}" if query else path


def assert_refused(response: httpx.Response, what: str) -> str | None:
    """A problem with the answer to a bad value, or None."""
    status = response.status_code
    if not 400 <= status < 500:
        return f"{what}: {status} {response.text[:200]}"
    try:
        body = response.json()
    except ValueError:
        return f"{what}: {status} not JSON: {response.text[:200]}"
    if not (isinstance(body, dict) and {"error", "message", "details"} <= set(body)):
        return f"{what}: {status} not the error envelope: {response.text[:200]}"
    return None


async def test_unstorable_text_is_refused_by_every_operation(admin: httpx.AsyncClient) -> None:
    document = (await admin.get("/openapi.json")).json()
    known = bodies()
    problems: list[str] = []
    requests = 0
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            label = f"{method.upper()} {path}"
            params = base_parameters(operation)
            body = known.get((method, path))
            if "requestBody" in operation and body is None:
                problems.append(f"{label}: no well-formed body in this test")
                continue
            base = orjson.dumps(body) if body is not None else None

            async def send(
                target: str,
                content: bytes | None = base,
                headers: dict[str, str] | None = None,
                method: str = method,
            ) -> httpx.Response:
                nonlocal requests
                requests += 1
                return await admin.request(
                    method,
                    target,
                    content=content,
                    headers={"Content-Type": "application/json", **(headers or {})},
                )

            answer = await send(url(path, params))
            if answer.status_code >= 500:
                problems.append(f"{label} (well-formed): {answer.status_code} {answer.text[:200]}")
            for kind, value in URL_VALUES.items():
                for location in ("path", "query"):
                    names = [
                        p["name"]
                        for p in operation.get("parameters", [])
                        if p["in"] == location and string_parameter(p)
                    ]
                    for name in names:
                        changed = {k: dict(v) for k, v in params.items()}
                        changed[location][name] = value
                        what = f"{label} {location} {name} [{kind}]"
                        problem = assert_refused(await send(url(path, changed)), what)
                        problems.extend([problem] if problem else [])
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "header" and parameter["name"] not in IGNORED_HEADERS:
                    what = f"{label} header {parameter['name']} [over-long]"
                    headers = {parameter["name"]: URL_VALUES["over-long"]}
                    response = await send(url(path, params), headers=headers)
                    problem = assert_refused(response, what)
                    problems.extend([problem] if problem else [])
            for field, changed in mutations(body) if body is not None else ():
                for kind, literal in BODY_VALUES.items():
                    what = f"{label} body {field} [{kind}]"
                    response = await send(url(path, params), with_value(changed, literal))
                    problem = assert_refused(response, what)
                    problems.extend([problem] if problem else [])
    assert requests > 300
    assert not problems, "\n".join(problems)
