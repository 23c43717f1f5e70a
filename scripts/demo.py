"""``make demo``: seed a running platform with demo jobs through the public API, so that a
new user sees a living system: jobs succeeded, retrying, dead (with a dead letter), running
and queued, of every type, for both demo users."""

from __future__ import annotations

import base64
import io
import os
import sys
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


def main() -> int:
    with httpx.Client(base_url=GATEWAY, timeout=30) as client:
        tokens = {
            "admin": login(client, "admin@test.com", "admin123"),
            "user": login(client, "user@test.com", "user123"),
        }
        accepted = 0
        for who, body in demo_jobs():
            response = client.post("/api/jobs", json=body, headers=tokens[who])
            if response.status_code != 202:
                print(f"demo job refused: {response.status_code} {response.text}", file=sys.stderr)
                continue
            accepted += 1
    print(f"demo data: {accepted} jobs submitted through {GATEWAY}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
