"""``POST /api/jobs`` and ``POST /api/batches`` through their fast routes
(``jobs_common.fast_routes``, ``proxy.fast_routes``) answer as FastAPI's proxy route does:
the same statuses, bodies and headers to the client, the same request to the backend."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import orjson
import pytest
from fastapi import Request, Response

from jobs_common.fast_routes import FastRoutes
from jobs_gateway.api import proxy
from jobs_gateway.service import create_app

from ..conftest import SettingsFactory, Upstreams, login, running

pytestmark = pytest.mark.integration

# Each gateway makes its own of these: they cannot be compared.
OWN = {"x-request-id", "x-trace-id", "traceparent", "date", "content-length"}
LIMIT = 100_000  # bytes of a job's body
BODY = orjson.dumps({"type": "email", "priority": 2, "payload": {"to": "a@b.c"}})


@asynccontextmanager
async def gateway_of(
    make_settings: SettingsFactory, upstreams: Upstreams, *, fast: bool
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        make_settings(
            submission_url=upstreams.submission.url,
            dashboard_url=upstreams.dashboard.url,
            max_job_body_bytes=LIMIT,
        )
    )
    if not fast:
        app.user_middleware = [m for m in app.user_middleware if m.cls is not FastRoutes]
    async with running(app) as client:
        yield client


def cases(token: str) -> list[tuple[str, str, dict[str, str], bytes]]:
    """(path with its query, name, headers, body)."""
    me = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return [
        ("/api/jobs", "accepted", {**me, "Idempotency-Key": "k-1"}, BODY),
        ("/api/jobs?status=202&x=%20y", "a query passed on", me, BODY),
        ("/api/jobs?status=503", "the backend's refusal", me, BODY),
        ("/api/jobs", "from a browser", {**me, "Origin": "http://localhost:5173"}, BODY),
        ("/api/jobs", "forged identity headers", {**me, "X-User-Role": "admin"}, BODY),
        ("/api/jobs", "no token", {"Content-Type": "application/json"}, BODY),
        ("/api/jobs", "a broken token", {"Authorization": "Bearer not-a-jwt"}, BODY),
        ("/api/jobs", "an unknown key", {"X-API-Key": "jk_" + "0" * 40}, BODY),
        ("/api/jobs?projectId=a", "two projects named", {**me, "X-Project": "b"}, BODY),
        ("/api/jobs", "a project not mine", {**me, "X-Project": str(uuid.uuid4())}, BODY),
        ("/api/jobs", "NUL in a header", {**me, "Idempotency-Key": "a\x00b"}, BODY),
        ("/api/jobs", "above the body limit", me, b"[" + b"0," * LIMIT + b"0]"),
        ("/api/batches", "a batch", me, orjson.dumps({"jobs": [orjson.loads(BODY)]})),
        ("/api/batches", "a batch without a token", {}, b"{}"),
    ]


async def answers(
    client: httpx.AsyncClient, upstreams: Upstreams
) -> list[tuple[str, int, Any, dict[str, str], list[Any]]]:
    token = str((await login(client, "user@test.com", "user123"))["token"])
    await client.post("/api/jobs", content=BODY, headers={"Authorization": f"Bearer {token}"})
    await client.post("/api/batches", content=b"{}", headers={"Authorization": f"Bearer {token}"})
    result = []
    for path, name, headers, body in cases(token):
        before = len(upstreams.submission.calls())
        answer = await client.post(path, content=body, headers=headers)
        sent = [
            (c.method, c.raw_path, c.query, sorted(h for h in c.headers if h[0] not in OWN), c.body)
            for c in upstreams.submission.calls()[before:]
        ]
        shown = {k: v for k, v in answer.headers.items() if k not in OWN}
        result.append((name, answer.status_code, answer.json(), shown, sent))
    return result


async def test_the_fast_routes_answer_as_the_proxy_route(
    make_settings: SettingsFactory, upstreams: Upstreams, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_answers = 0
    plain = proxy.proxy

    async def counted(request: Request) -> Response:
        nonlocal fast_answers
        fast_answers += 1
        return await plain(request)

    monkeypatch.setattr(proxy, "proxy", counted)  # what the fast routes answer with
    async with gateway_of(make_settings, upstreams, fast=True) as client:
        fast = await answers(client, upstreams)
    # Every case but two the middleware around answers: the NUL (the input rule,
    # ``jobs_common.storable_input``) and the body above the limit (its Content-Length).
    assert fast_answers == len(fast) - 2
    async with gateway_of(make_settings, upstreams, fast=False) as client:
        route = await answers(client, upstreams)
    assert fast_answers == len(fast) - 2
    for through_fast, through_route in zip(fast, route, strict=True):
        assert through_fast == through_route
    statuses = {name: status for name, status, _, _, _ in fast}
    assert statuses == {
        "accepted": 200,
        "a query passed on": 202,
        "the backend's refusal": 503,
        "from a browser": 200,
        "forged identity headers": 200,
        "no token": 401,
        "a broken token": 401,
        "an unknown key": 401,
        "two projects named": 400,
        "a project not mine": 404,
        "NUL in a header": 422,
        "above the body limit": 413,
        "a batch": 200,
        "a batch without a token": 401,
    }
