"""The gateway's public API as a careful client uses it during faults.

A submission carries an ``Idempotency-Key`` and is sent again with the same key while it has
no answer (connection refused or reset, timeout, 5xx, 429) or its token expired (401: log in
again), for at most ``give_up_after`` seconds; so each 2xx stands for exactly one job, and a
submission never answered is counted as given up (it may or may not exist).
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
        self, base_url: str, email: str, password: str, *, give_up_after: float = 120.0
    ) -> None:
        self.base_url = base_url
        self.email = email
        self.password = password
        self.give_up_after = give_up_after
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
        return {"Authorization": f"Bearer {self._token}", **extra}

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
        deadline = time.monotonic() + retry_for
        while True:
            token = self._token
            try:
                response = await self._http.get(path, params=params, headers=self._headers())
            except httpx.TransportError:
                response = None
            if response is not None:
                if response.status_code == 401:
                    await self.login(stale=token)
                    continue
                if response.status_code < 500 or time.monotonic() > deadline:
                    return response
            elif time.monotonic() > deadline:
                raise RuntimeError(f"GET {path}: no answer in {retry_for} s")
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


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"text": response.text[:500]}
    return body if isinstance(body, dict) else {"body": body}
