"""The gateway's public API as a careful client uses it during faults.

A submission carries an ``Idempotency-Key`` and is sent again with the same key while it has
no answer (connection refused or reset, timeout, 5xx, 429) or its token expired (401: log in
again), for at most ``give_up_after`` seconds; so each 2xx stands for exactly one job, and a
submission never answered is counted as given up (it may or may not exist). A client made
with ``project`` acts in that project (``X-Project`` on every request, docs/tenancy.md).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

RETRIED_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Answer:
    status: int  # 0: never answered with a 2xx or a final 4xx (given up)
    body: dict[str, Any]
    tries: int
    key: str


@dataclass
class ClientStats:
    requests: int = 0
    no_answer: int = 0  # transport errors and timeouts
    retried_status: Counter[int] = field(default_factory=Counter)
    logins: int = 0

    def snapshot(self) -> ClientStats:
        return ClientStats(self.requests, self.no_answer, Counter(self.retried_status), self.logins)

    def since(self, earlier: ClientStats) -> ClientStats:
        return ClientStats(
            self.requests - earlier.requests,
            self.no_answer - earlier.no_answer,
            self.retried_status - earlier.retried_status,
            self.logins - earlier.logins,
        )


class GatewayClient:
    def __init__(
        self,
        base_url: str,
        email: str,
        password: str,
        *,
        give_up_after: float = 120.0,
        project: str | None = None,
    ) -> None:
        self.base_url = base_url
        self.email = email
        self.password = password
        self.give_up_after = give_up_after
        self.project = project
        self.stats = ClientStats()
        self._token = ""
        self._login_lock = asyncio.Lock()
        self._http = httpx.AsyncClient(
            base_url=base_url,
            timeout=httpx.Timeout(15.0, connect=3.0),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def login(self, *, stale: str | None = None, timeout: float = 120.0) -> None:
        """Log in (again), retried while the gateway is away; ``stale``: the token that was
        refused (another task may have replaced it already)."""
        async with self._login_lock:
            if stale is not None and self._token != stale:
                return
            deadline = time.monotonic() + timeout
            pause = 0.2
            while True:
                try:
                    response = await self._http.post(
                        "/auth/login", json={"email": self.email, "password": self.password}
                    )
                    if response.status_code == 200:
                        self._token = response.json()["token"]
                        self.stats.logins += 1
                        return
                    if response.status_code not in RETRIED_STATUSES:
                        raise RuntimeError(f"login refused: {response.status_code} {response.text}")
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"could not log in as {self.email} in {timeout} s")
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    def _headers(self, **extra: str) -> dict[str, str]:
        project = {"X-Project": self.project} if self.project else {}
        return {"Authorization": f"Bearer {self._token}", **project, **extra}

    async def submit(self, path: str, body: dict[str, Any]) -> Answer:
        """POST ``body`` until a 2xx or a final 4xx, with one idempotency key throughout."""
        key = str(uuid.uuid4())
        deadline = time.monotonic() + self.give_up_after
        pause = 0.2
        tries = 0
        while True:
            tries += 1
            token = self._token
            self.stats.requests += 1
            try:
                response = await self._http.post(
                    path, json=body, headers=self._headers(**{"Idempotency-Key": key})
                )
            except httpx.TransportError:
                self.stats.no_answer += 1
            else:
                if 200 <= response.status_code < 300:
                    return Answer(response.status_code, response.json(), tries, key)
                if response.status_code == 401:
                    await self.login(stale=token)
                    continue
                if response.status_code not in RETRIED_STATUSES:
                    return Answer(response.status_code, _json(response), tries, key)
                self.stats.retried_status[response.status_code] += 1
            if time.monotonic() > deadline:
                return Answer(0, {}, tries, key)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)

    async def get(self, path: str, *, retry_for: float = 30.0, **params: Any) -> httpx.Response:
        """GET, retried on no answer or 5xx for ``retry_for`` seconds (last answer returned)."""
        return await self.request("GET", path, retry_for=retry_for, params=params)

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        retry_for: float = 30.0,
    ) -> httpx.Response:
        """A request retried on no answer or 5xx for ``retry_for`` seconds (the last answer
        returned): for reads, and for commands that are idempotent or answer a repeat with a
        409 the caller reads (a queue's create, pause, resume, change)."""
        deadline = time.monotonic() + retry_for
        while True:
            token = self._token
            try:
                response = await self._http.request(
                    method, path, json=json, params=params, headers=self._headers()
                )
            except httpx.TransportError:
                response = None
            if response is not None:
                if response.status_code == 401:
                    await self.login(stale=token)
                    continue
                if response.status_code < 500 or time.monotonic() > deadline:
                    return response
            elif time.monotonic() > deadline:
                raise RuntimeError(f"{method} {path}: no answer in {retry_for} s")
            await asyncio.sleep(0.5)

    async def create_schedule(self, name: str, cron: str, template: dict[str, Any]) -> str:
        answer = await self.submit(
            "/api/schedules",
            {"name": name, "cron": cron, "timezone": "UTC", "jobTemplate": template},
        )
        if answer.status not in (200, 201):
            raise RuntimeError(f"schedule refused: {answer.status} {answer.body}")
        schedule_id: str = answer.body["id"]
        return schedule_id

    # Organizations, projects and queues (docs/tenancy.md, docs/flow-control.md)

    async def create_project(self, organization: str, project: str) -> str:
        """A new organization of this user's, with one project: the project's id."""
        answer = await self.submit("/api/organizations", {"name": organization})
        if answer.status != 201:
            raise RuntimeError(f"organization refused: {answer.status} {answer.body}")
        answer = await self.submit("/api/projects", {"orgId": answer.body["id"], "name": project})
        if answer.status != 201:
            raise RuntimeError(f"project refused: {answer.status} {answer.body}")
        project_id: str = answer.body["id"]
        return project_id

    async def wait_project(self, project_id: str, timeout: float = 30.0) -> None:
        """Until the gateway lets this user act in a project it just created (it caches a
        user's grants for a moment: docs/tenancy.md)."""
        deadline = time.monotonic() + timeout
        while True:
            response = await self.get("/api/queues", projectId=project_id, pageSize=1)
            if response.status_code == 200:
                return
            if response.status_code != 404 or time.monotonic() > deadline:
                raise RuntimeError(f"project {project_id}: {response.status_code} {response.text}")
            await asyncio.sleep(0.2)

    async def queue(self, project_id: str, name: str) -> dict[str, Any]:
        """A project's queue by name, created (with no limits) when it has none yet."""
        for _ in range(3):
            found = await self.get("/api/queues", projectId=project_id, name=name)
            items = _ok(found, f"GET /api/queues {name}").get("items") or []
            if items:
                queue: dict[str, Any] = items[0]
                return queue
            created = await self.request(
                "POST", "/api/queues", params={"projectId": project_id}, json={"name": name}
            )
            if created.status_code == 201:
                return _ok(created, f"POST /api/queues {name}")
            if created.status_code != 409:  # 409: created meanwhile (its first job): read it
                _ok(created, f"POST /api/queues {name}")
        raise RuntimeError(f"queue {name} of project {project_id} neither found nor created")

    async def change_queue(self, queue_id: str, **fields: Any) -> dict[str, Any]:
        """``PATCH /api/queues/{id}`` with camelCase ``fields`` (None clears a limit)."""
        response = await self.request("PATCH", f"/api/queues/{queue_id}", json=fields)
        return _ok(response, f"PATCH /api/queues/{queue_id}")

    async def pause_queue(self, queue_id: str, *, paused: bool = True) -> dict[str, Any]:
        """Pause (or resume) a queue; both are idempotent."""
        action = "pause" if paused else "resume"
        response = await self.request("POST", f"/api/queues/{queue_id}/{action}")
        return _ok(response, f"POST /api/queues/{queue_id}/{action}")


def _ok(response: httpx.Response, what: str) -> dict[str, Any]:
    if not 200 <= response.status_code < 300:
        raise RuntimeError(f"{what}: {response.status_code} {response.text[:500]}")
    return _json(response)


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"text": response.text[:500]}
    return body if isinstance(body, dict) else {"body": body}
