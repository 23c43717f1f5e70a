"""``make demo``: seed a running platform with demo data through the public API, so that a
new user sees a living system: jobs of every type in every state (succeeded, retrying,
scheduled, blocked, queued, running, cancelled, dead with a dead letter), a batch, a cron
schedule and a named retry policy, for both demo users; and jobs in the demo team's projects
(Acme Corp's Web App and Background Jobs, Startup Inc's Analytics Pipeline: docs/tenancy.md),
submitted by their members."""

from __future__ import annotations

import base64
import io
import os
import sys
import time
from typing import Any

import httpx
from PIL import Image

GATEWAY = os.environ.get("GATEWAY_URL", "http://127.0.0.1:3000")


def login(client: httpx.Client, email: str, password: str) -> dict[str, str]:
    response = client.post("/auth/login", json={"email": email, "password": password})
    response.raise_for_status()
    return {"Authorization": f"Bearer {response.json()['token']}"}


def png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 200), (40, 120, 200)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def demo_jobs() -> list[tuple[str, dict[str, Any]]]:
    quick = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0.2, "maxSeconds": 1}
    jobs: list[tuple[str, dict[str, Any]]] = []
    for index in range(6):
        jobs.append(("user", {"type": "simulate", "priority": 1 + index % 3, "payload": quick}))
    jobs += [
        (
            "user",
            {
                "type": "email",
                "priority": 3,
                "payload": {
                    "to": "team@example.com",
                    "subject": "Welcome to the job platform",
                    "body": "This email was sent by a worker through the local SMTP sink.",
                },
            },
        ),
        (
            "user",
            {
                "type": "image_resize",
                "priority": 2,
                "payload": {"imageBase64": png(), "width": 160, "height": 100, "format": "webp"},
            },
        ),
        (
            "admin",
            {
                "type": "report_generation",
                "priority": 1,
                "payload": {"reportType": "jobs_summary", "format": "json"},
            },
        ),
        # Dead on its first attempt: an image that cannot be decoded is a permanent error.
        (
            "user",
            {
                "type": "image_resize",
                "priority": 2,
                "payload": {
                    "imageBase64": base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode(),
                    "width": 10,
                    "height": 10,
                },
            },
        ),
        # Fails every attempt: retries with backoff, then a dead letter.
        (
            "admin",
            {
                "type": "simulate",
                "priority": 2,
                "maxAttempts": 3,
                "payload": {"immediateFailureRate": 1},
            },
        ),
        # The reference demo behaviour: random outcomes, retries.
        *[("admin", {"type": "simulate", "priority": 1 + i % 3, "payload": {}}) for i in range(8)],
        # Long runners (running for a few minutes) and more than the workers take: queued.
        *[
            (
                "admin",
                {
                    "type": "simulate",
                    "priority": 1,
                    "timeoutSeconds": 600,
                    "payload": {
                        "immediateFailureRate": 0,
                        "failureRate": 0,
                        "minSeconds": 120,
                        "maxSeconds": 240,
                    },
                },
            )
            for _ in range(14)
        ],
    ]
    return jobs


def post(client: httpx.Client, path: str, body: Any, headers: dict[str, str]) -> Any:
    response = client.post(path, json=body, headers=headers)
    if response.status_code >= 400 and response.status_code != 409:
        print(f"demo {path} refused: {response.status_code} {response.text}", file=sys.stderr)
        return None
    return response.json()


def wait_recorded(client: httpx.Client, job_id: str, headers: dict[str, str]) -> None:
    for _ in range(100):
        if client.get(f"/api/jobs/{job_id}", headers=headers).status_code == 200:
            return
        time.sleep(0.1)


def seed_scheduling(client: httpx.Client, tokens: dict[str, dict[str, str]]) -> None:
    admin, user = tokens["admin"], tokens["user"]
    post(
        client,
        "/api/retry-policies",
        {
            "name": "gentle",
            "strategy": "linear",
            "baseDelayMs": 2000,
            "multiplier": 1,
            "maxDelayMs": 30000,
            "jitter": True,
            "maxAttempts": 5,
        },
        admin,
    )
    post(
        client,
        "/api/schedules",
        {
            "name": "nightly-report",
            "cron": "0 3 * * *",
            "timezone": "Europe/Berlin",
            "jobTemplate": {
                "type": "report_generation",
                "priority": 1,
                "payload": {"reportType": "jobs_summary", "format": "csv"},
            },
        },
        admin,
    )
    post(
        client,
        "/api/schedules",
        {
            "name": "heartbeat-every-5-min",
            "cron": "*/5 * * * *",
            "timezone": "UTC",
            "jobTemplate": {
                "type": "simulate",
                "priority": 1,
                "retryPolicy": "gentle",
                "payload": {"immediateFailureRate": 0, "failureRate": 0.2},
            },
        },
        admin,
    )
    post(
        client,
        "/api/batches",
        {
            "name": "demo import",
            "jobs": [
                {"type": "simulate", "priority": 2, "payload": {"minSeconds": 0.2, "maxSeconds": 2}}
                for _ in range(20)
            ],
        },
        user,
    )
    # Scheduled for later, blocked behind a long parent, and one cancelled.
    post(
        client,
        "/api/jobs",
        {
            "type": "email",
            "priority": 2,
            "delaySeconds": 3600,
            "payload": {
                "to": "later@example.com",
                "subject": "In an hour",
                "body": "Delayed demo email",
            },
        },
        user,
    )
    parent = post(
        client,
        "/api/jobs",
        {
            "type": "simulate",
            "priority": 1,
            "payload": {
                "immediateFailureRate": 0,
                "failureRate": 0,
                "minSeconds": 90,
                "maxSeconds": 90,
            },
        },
        user,
    )
    if parent:
        post(
            client,
            "/api/jobs",
            {
                "type": "report_generation",
                "priority": 2,
                "dependsOn": [parent["jobId"]],
                "payload": {"reportType": "jobs_summary", "format": "json"},
            },
            user,
        )
    doomed = post(
        client,
        "/api/jobs",
        {"type": "simulate", "priority": 1, "delaySeconds": 600, "payload": {}},
        user,
    )
    if doomed:
        wait_recorded(client, doomed["jobId"], user)
        post(client, f"/api/jobs/{doomed['jobId']}/cancel", {"reason": "demo"}, user)


QUICK = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0.2, "maxSeconds": 1}
LONG = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 120, "maxSeconds": 240}


def team_jobs() -> list[tuple[str, str, dict[str, Any]]]:
    """(who, project, job): the demo team's jobs, in every state, in its three projects."""
    web, background = "acme-corp/web-app", "acme-corp/background-jobs"
    analytics = "startup-inc/analytics-pipeline"
    email = {"to": "team@example.com", "subject": "Welcome", "body": "Sent for Acme's Web App"}
    return [
        *[("alice", web, {"type": "simulate", "priority": 2, "payload": QUICK}) for _ in range(3)],
        ("alice", web, {"type": "email", "priority": 3, "payload": email}),
        ("alice", web, {"type": "email", "priority": 2, "delaySeconds": 7200, "payload": email}),
        ("alice", web, {"type": "simulate", "priority": 1, "timeoutSeconds": 600, "payload": LONG}),
        (
            "bob",
            background,
            {
                "type": "simulate",
                "priority": 2,
                "maxAttempts": 3,
                "payload": {"immediateFailureRate": 1},
            },
        ),
        ("bob", background, {"type": "simulate", "priority": 1, "payload": {}}),
        ("bob", analytics, {"type": "simulate", "priority": 2, "payload": QUICK}),
        (
            "bob",
            analytics,
            {
                "type": "report_generation",
                "priority": 1,
                "payload": {"reportType": "jobs_summary", "format": "json"},
            },
        ),
    ]


def seed_team(client: httpx.Client) -> int:
    """The demo team's jobs; none when the gateway has no demo team (not in development)."""
    try:
        members = {
            "alice": login(client, "admin@example.com", "password123"),
            "bob": login(client, "dev@example.com", "password123"),
        }
    except httpx.HTTPStatusError:
        print("demo: no demo team on this gateway (development only)", file=sys.stderr)
        return 0
    accepted = 0
    for who, project, body in team_jobs():
        if post(client, "/api/jobs", body, members[who] | {"X-Project": project}) is not None:
            accepted += 1
    batch = {
        "name": "nightly import",
        "jobs": [{"type": "simulate", "priority": 1, "payload": QUICK}] * 10,
    }
    post(client, "/api/batches", batch, members["bob"] | {"X-Project": "acme-corp/background-jobs"})
    cancelled = post(
        client,
        "/api/jobs",
        {"type": "simulate", "priority": 1, "delaySeconds": 600, "payload": {}},
        members["bob"] | {"X-Project": "acme-corp/background-jobs"},
    )
    if cancelled:
        wait_recorded(client, cancelled["jobId"], members["bob"])
        post(client, f"/api/jobs/{cancelled['jobId']}/cancel", {"reason": "demo"}, members["bob"])
    return accepted


def main() -> int:
    with httpx.Client(base_url=GATEWAY, timeout=30) as client:
        tokens = {
            "admin": login(client, "admin@test.com", "admin123"),
            "user": login(client, "user@test.com", "user123"),
        }
        accepted = 0
        for who, body in demo_jobs():
            if post(client, "/api/jobs", body, tokens[who]) is not None:
                accepted += 1
        seed_scheduling(client, tokens)
        team = seed_team(client)
    print(
        f"demo data: {accepted} jobs, a batch, schedules and a retry policy, and {team} jobs "
        f"in the demo team's projects via {GATEWAY}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
