"""Backends trust only the gateway: every operation of the submission and dashboard services,
called directly without the gateway's internal token (none, empty, wrong, or a user's own
bearer token and identity headers), is refused with 401 and changes nothing."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from jobs_testing.stack import Stack

pytestmark = pytest.mark.e2e

SAMPLE_ID = "00000000-0000-4000-8000-000000000000"
BODY = {"type": "simulate", "payload": {}, "jobs": [], "cron": "* * * * *"}


def operations(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(method, concrete path) of every documented operation under /api."""
    found = []
    for path, item in document["paths"].items():
        if not path.startswith("/api/"):
            continue
        concrete = re.sub(r"\{[^}]+\}", SAMPLE_ID, path)
        found.extend(
            (method.upper(), concrete)
            for method in item
            if method in {"get", "post", "put", "patch", "delete"}
        )
    return found


CREDENTIALS: dict[str, dict[str, str]] = {
    "none": {},
    "empty token": {"x-internal-token": ""},
    "wrong token": {"x-internal-token": "not-the-internal-token-0123456789abcdef"},
    "identity without token": {
        "x-user-id": SAMPLE_ID,
        "x-user-email": "admin@test.com",
        "x-user-role": "admin",
    },
}


async def assert_all_refused(
    client: httpx.AsyncClient,
    admin: httpx.AsyncClient,
    calls: list[tuple[str, str]],
    body: dict[str, Any],
) -> None:
    """Each call, with each credential that is not the internal token (and a user's own
    bearer token), answers 401 unauthorized; ``body`` goes with the calls that take one."""
    bearer = {"authorization": admin.headers["authorization"]}
    for method, path in calls:
        for name, headers in {**CREDENTIALS, "user's bearer": bearer}.items():
            answer = await client.request(
                method,
                path,
                headers={**headers, **CREDENTIALS["identity without token"]}
                if name == "wrong token"
                else headers,
                json=body if method in {"POST", "PUT", "PATCH"} else None,
            )
            assert answer.status_code == 401, (method, path, name, answer.text)
            assert answer.json()["error"] == "unauthorized", (method, path, name)


@pytest.mark.parametrize("backend", ["submission", "dashboard"])
async def test_backends_refuse_calls_without_the_gateways_token(
    stack: Stack, admin: httpx.AsyncClient, backend: str
) -> None:
    url = stack.services[backend].url
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        document = (await client.get("/openapi.json")).json()
        calls = operations(document)
        assert len(calls) >= (3 if backend == "submission" else 15)
        before = (await admin.get("/api/jobs", params={"pageSize": 1})).json()["totalItems"]
        await assert_all_refused(client, admin, calls, BODY)
        after = (await admin.get("/api/jobs", params={"pageSize": 1})).json()["totalItems"]
        assert after == before


SCHEDULER_COMMANDS = [
    ("POST", "/internal/v1/schedules"),
    ("POST", f"/internal/v1/schedules/{SAMPLE_ID}/pause"),
    ("POST", f"/internal/v1/schedules/{SAMPLE_ID}/resume"),
    ("DELETE", f"/internal/v1/schedules/{SAMPLE_ID}"),
]
NEW_SCHEDULE = {
    "name": "not-through-the-gateway",
    "cron": "* * * * *",
    "timezone": "UTC",
    "jobTemplate": {"type": "simulate", "payload": {}},
}


async def test_the_schedulers_internal_api_refuses_calls_without_the_token(
    stack: Stack, admin: httpx.AsyncClient
) -> None:
    """The scheduler's commands on the schedules it owns (the dashboard's calls) take the
    internal token too: without it nothing is created, paused or deleted."""
    url = stack.services["scheduler"].url
    before = (await admin.get("/api/schedules", params={"pageSize": 1})).json()["totalItems"]
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        await assert_all_refused(client, admin, SCHEDULER_COMMANDS, NEW_SCHEDULE)
    after = (await admin.get("/api/schedules", params={"pageSize": 1})).json()["totalItems"]
    assert after == before
