"""``POST /api/v1/jobs`` through its fast route (``jobs_common.fast_routes``,
``routes.accept_job``) answers every request as FastAPI's ``submit_job`` does: the same
statuses, envelopes, headers and stored jobs, in the same order of checks (the caller, then
the headers, then the body)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from fastapi import Request, Response

from jobs_common.api_models import REPLAYED_HEADER
from jobs_submission.api import routes

from .conftest import EMAIL_JOB, OTHER, AppFactory, RunningApp

pytestmark = pytest.mark.integration

JSON = {"content-type": "application/json"}
BODY = json.dumps(EMAIL_JOB).encode()
OTHER_BODY = json.dumps({**EMAIL_JOB, "priority": 3}).encode()
LIMIT = 100_000  # bytes of a job's body
NUL_BODY = json.dumps({**EMAIL_JOB, "payload": {**EMAIL_JOB["payload"], "body": "a\x00b"}})


def cases(app: RunningApp, label: str) -> list[tuple[str, dict[str, str], bytes]]:
    """(name, headers, body): accepted, replayed, refused at each check."""
    me = {**app.headers(), **JSON}
    stranger = {**OTHER.headers("not-the-internal-token-0123456789"), **JSON}
    key = f"{label}-key"
    return [
        ("accepted", me, BODY),
        ("keyed", {**me, "Idempotency-Key": key}, BODY),
        ("replayed", {**me, "Idempotency-Key": key}, BODY),
        ("key reused with another body", {**me, "Idempotency-Key": key}, OTHER_BODY),
        ("traced", {**me, "X-Trace-Id": f"{label}-trace"}, BODY),
        ("no caller", JSON, BODY),
        ("wrong internal token", stranger, BODY),
        ("no caller before a bad key", {**JSON, "Idempotency-Key": ""}, b"{"),
        ("empty key", {**me, "Idempotency-Key": ""}, BODY),
        ("long key", {**me, "Idempotency-Key": "k" * 201}, BODY),
        ("key with a tab", {**me, "Idempotency-Key": "a\tb"}, BODY),
        ("long trace id", {**me, "X-Trace-Id": "t" * 129}, BODY),
        ("both headers bad", {**me, "Idempotency-Key": "", "X-Trace-Id": "t" * 129}, BODY),
        ("bad key before a broken body", {**me, "Idempotency-Key": ""}, b"{not json"),
        ("broken body", me, b"{not json"),
        ("not an object", me, b"[1, 2]"),
        ("empty body", me, b""),
        ("NUL in the payload", me, NUL_BODY.encode()),
        ("unknown type", me, json.dumps({**EMAIL_JOB, "type": "teleport"}).encode()),
        ("for someone else", me, json.dumps({**EMAIL_JOB, "submittedBy": "x@y.z"}).encode()),
        ("unknown project", me, json.dumps({**EMAIL_JOB, "projectId": "nope"}).encode()),
        ("above the body limit", me, b'{"pad": "' + b"x" * LIMIT + b'"}'),
    ]


async def answers(app: RunningApp, label: str) -> list[tuple[str, int, Any, dict[str, str]]]:
    """Each case's status, body and telling headers, ids and the label made comparable."""
    seen: dict[str, str] = {}

    def comparable(text: str) -> Any:
        text = text.replace(label, "LABEL")
        for found in re.findall(
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", text
        ):
            seen.setdefault(found, f"id{len(seen) + 1}")
            text = text.replace(found, seen[found])
        return json.loads(text) if text else None

    result = []
    for name, headers, body in cases(app, label):
        answer = await app.client.post("/api/v1/jobs", content=body, headers=headers)
        telling = {
            k: answer.headers[k]
            for k in ("content-type", REPLAYED_HEADER.lower(), "retry-after")
            if k in answer.headers
        }
        result.append((name, answer.status_code, comparable(answer.text), telling))
    return result


async def test_the_fast_route_answers_as_the_route(
    app_factory: AppFactory, collection: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_answers = 0
    plain: Callable[[Request], Awaitable[Response]] = routes.accept_job

    async def counted(request: Request) -> Response:
        nonlocal fast_answers
        fast_answers += 1
        return await plain(request)

    monkeypatch.setattr(routes, "accept_job", counted)
    label = f"f{uuid.uuid4().hex[:8]}"
    async with app_factory(relay_enabled=False, max_job_body_bytes=LIMIT) as app:
        first = await app.submit()  # FastAPI routes the first: the fast route learns it
        assert first.status_code == 202
        fast = await answers(app, label)
    # Every case but the one the body limit answers itself (its Content-Length is too large).
    assert fast_answers == len(fast) - 1
    label = f"r{uuid.uuid4().hex[:8]}"
    async with app_factory(relay_enabled=False, max_job_body_bytes=LIMIT, fast_routes=False) as app:
        assert (await app.submit()).status_code == 202
        route = await answers(app, label)
    assert fast_answers == len(fast) - 1
    for through_fast, through_route in zip(fast, route, strict=True):
        assert through_fast == through_route
    statuses = {name: status for name, status, _, _ in fast}
    assert statuses["replayed"] == 202 and statuses["no caller before a bad key"] == 401
    assert statuses["bad key before a broken body"] == 422 and statuses["broken body"] == 400
    assert statuses["above the body limit"] == 413
    # What each stored: the two accepted apart, the traced and the keyed (replayed: none).
    assert await collection.count_documents({}) == 2 * 4
