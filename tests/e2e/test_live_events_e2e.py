"""Live events through the real stack: the scheduler publishes each committed change on
``jobs.events``, the gateway's WebSocket pushes it to the job's owner (and admins, not to
other users), and a subscribed job's log lines follow while it runs."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from jobs_testing.gateway_session import login

from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

WORK_2S = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 2, "maxSeconds": 2}


class Socket:
    """One browser's live connection: every frame it got, with when it got it."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[tuple[float, dict[str, Any]]] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for text in self.connection:
            self.frames.append((time.time(), json.loads(text)))

    async def send(self, frame: dict[str, Any]) -> None:
        await self.connection.send(json.dumps(frame))

    def changes_of(self, job_id: str) -> list[tuple[float, dict[str, Any]]]:
        return [
            (at, change)
            for at, frame in self.frames
            if frame["type"] == "job.changes"
            for change in frame["changes"]
            if change["jobId"] == job_id
        ]

    def lines_of(self, job_id: str) -> list[str]:
        return [
            line["message"]
            for _, frame in self.frames
            if frame["type"] == "job.logs"
            for line in frame["lines"]
            if line["jobId"] == job_id
        ]

    async def until(self, what: str, holds: Any, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not holds():
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what}; frames: {[f for _, f in self.frames][-10:]}")
            await asyncio.sleep(0.02)


@asynccontextmanager
async def live(gateway_url: str, token: str) -> AsyncIterator[Socket]:
    url = gateway_url.replace("http://", "ws://") + f"/ws/events?token={token}"
    async with connect(url) as connection:
        socket = Socket(connection)
        await socket.until("hello", lambda: bool(socket.frames))
        assert socket.frames[0][1]["type"] == "hello"
        try:
            yield socket
        finally:
            socket._reader.cancel()


async def test_owner_and_admin_watch_a_job_live_and_others_do_not(
    gateway_url: str, user: httpx.AsyncClient, admin: httpx.AsyncClient
) -> None:
    stranger_email = f"stranger-{uuid.uuid4().hex[:8]}@example.com"
    registered = await user.post(
        "/auth/register", json={"email": stranger_email, "password": "a-long-password"}
    )
    assert registered.status_code == 202, registered.text
    tokens = {
        "user": await login(gateway_url, "user@test.com", "user123"),
        "admin": await login(gateway_url, "admin@test.com", "admin123"),
        "stranger": await login(gateway_url, stranger_email, "a-long-password"),
    }
    async with (
        live(gateway_url, tokens["user"]) as owner,
        live(gateway_url, tokens["admin"]) as watcher,
        live(gateway_url, tokens["stranger"]) as stranger,
    ):
        submitted = await user.post(
            "/api/jobs", json={"type": "simulate", "priority": 2, "payload": WORK_2S}
        )
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["jobId"]

        await owner.until("the job queued", lambda: len(owner.changes_of(job_id)) >= 2)
        await owner.send({"type": "subscribe", "jobId": job_id})
        await owner.until(
            "the subscription",
            lambda: any(f == {"type": "subscribed", "jobId": job_id} for _, f in owner.frames),
        )
        await owner.until(
            "succeeded", lambda: owner.changes_of(job_id)[-1][1]["toStatus"] == "succeeded"
        )
        moves = [(c["fromStatus"], c["toStatus"]) for _, c in owner.changes_of(job_id)]
        assert moves == [
            (None, "pending"),
            ("pending", "queued"),
            ("queued", "running"),
            ("running", "succeeded"),
        ]
        await owner.until(
            "the last log line",
            lambda: any("succeeded" in line for line in owner.lines_of(job_id)),
        )

        # The change reached the browser soon after the scheduler committed it.
        detail = await wait_for_job(user, job_id, {"succeeded"})
        finished = detail["finishedAt"]
        seen_at = owner.changes_of(job_id)[-1][0]
        lag = seen_at - datetime.fromisoformat(finished).timestamp()
        print(f"succeeded reached the owner's socket {lag * 1000:.0f} ms after finishedAt")
        assert lag < 3.0

        await watcher.until("the admin's view", lambda: len(watcher.changes_of(job_id)) >= 4)
        assert {c["submittedBy"] for _, c in watcher.changes_of(job_id)} == {"user@test.com"}
        assert all("submittedBy" not in c for _, c in owner.changes_of(job_id))
        await asyncio.sleep(0.5)  # anything in flight to the stranger has arrived by now
        assert stranger.changes_of(job_id) == []


async def test_a_stranger_cannot_follow_someone_elses_logs(
    gateway_url: str, user: httpx.AsyncClient
) -> None:
    submitted = await user.post(
        "/api/jobs", json={"type": "simulate", "priority": 2, "payload": WORK_2S}
    )
    job_id = submitted.json()["jobId"]
    await wait_for_job(user, job_id, {"queued", "running", "succeeded"})
    email = f"other-{uuid.uuid4().hex[:8]}@example.com"
    await user.post("/auth/register", json={"email": email, "password": "a-long-password"})
    async with live(gateway_url, await login(gateway_url, email, "a-long-password")) as other:
        await other.send({"type": "subscribe", "jobId": job_id})
        await other.until("an answer", lambda: len(other.frames) >= 2)
        assert other.frames[1][1]["type"] == "error"
        assert other.frames[1][1]["error"] == "not_found"
