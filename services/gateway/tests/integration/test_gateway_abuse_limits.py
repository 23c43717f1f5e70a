"""Abuse limits against real PostgreSQL, shared by replicas: login per account and per address,
registration per address, /api/* per user; each answers 429 with Retry-After and the error
envelope. Clocks are frozen so no window ends during a test unless the test moves it."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from jobs_gateway.service import create_app
from jobs_gateway.settings import Settings
from jobs_testing.waiting import eventually

from ..conftest import SettingsFactory, Upstreams

pytestmark = pytest.mark.integration

NOW = math.floor(time.time() / 60) * 60 + 20.25  # 20.25 s into a minute: 39.75 s left


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def replica(settings: Settings) -> AsyncIterator[tuple[FastAPI, Clock]]:
    """A gateway app with its lifespan running and its limits on a frozen clock (no purge
    of the frozen windows while it runs)."""
    app = create_app(settings.model_copy(update={"purge_interval_seconds": 3600.0}))
    clock = Clock()
    async with app.router.lifespan_context(app):
        app.state.accounts.limits.clock = clock
        app.state.api_rate_limit.clock = clock
        yield app, clock


@asynccontextmanager
async def client(app: FastAPI, address: str = "10.1.2.3") -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        yield http


async def login(http: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await http.post("/auth/login", json={"email": email, "password": password})


def assert_429(response: httpx.Response, retry_after: int) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["retry-after"] == str(retry_after)
    body = response.json()
    assert (body["error"], body["details"]) == ("too_many_requests", [])
    assert isinstance(body["message"], str)


def statuses(responses: list[httpx.Response]) -> list[int]:
    return [r.status_code for r in responses]


# -- login and registration --------------------------------------------------------------------


async def test_login_is_limited_per_account_whatever_the_address(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(login_attempts_per_account_per_minute=3)
    async with replica(settings) as (app, clock), client(app) as http:
        async with client(app, "10.9.9.9") as elsewhere:
            tries = [
                await login(http, "user@test.com", "wrong"),
                await login(elsewhere, "USER@test.com", "wrong"),
                await login(http, "user@test.com", "wrong"),
            ]
            assert statuses(tries) == [401, 401, 401]
            assert_429(await login(elsewhere, "user@test.com", "user123"), 40)
            assert_429(await login(http, "user@test.com", "user123"), 40)
        # another account from the same address is not affected
        assert (await login(http, "admin@test.com", "admin123")).status_code == 200
        # an unknown email is limited alike (the limit tells nothing about accounts)
        unknown = [await login(http, "ghost@test.com", "x") for _ in range(4)]
        assert statuses(unknown) == [401, 401, 401, 429]
        clock.now += 40  # the next minute
        assert (await login(http, "user@test.com", "user123")).status_code == 200


async def test_login_is_limited_per_address_whatever_the_account(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(login_attempts_per_address_per_minute=4)
    async with replica(settings) as (app, _), client(app) as http:
        tries = [await login(http, f"someone{i}@test.com", "x") for i in range(4)]
        assert statuses(tries) == [401] * 4
        assert_429(await login(http, "user@test.com", "user123"), 40)
        async with client(app, "10.9.9.9") as elsewhere:
            assert (await login(elsewhere, "user@test.com", "user123")).status_code == 200


async def test_registration_is_limited_per_address(make_settings: SettingsFactory) -> None:
    settings = make_settings(registrations_per_address_per_hour=2)
    hour_left = math.ceil(math.floor(NOW / 3600) * 3600 + 3600 - NOW)
    async with replica(settings) as (app, _), client(app) as http:
        body = {"password": "longenough"}
        first = await http.post("/auth/register", json={"email": "a@example.com", **body})
        taken = await http.post("/auth/register", json={"email": "user@test.com", **body})
        assert statuses([first, taken]) == [202, 202]
        refused = await http.post("/auth/register", json={"email": "b@example.com", **body})
        assert_429(refused, hour_left)
        assert (await login(http, "b@example.com", "longenough")).status_code == 401
        async with client(app, "10.9.9.9") as elsewhere:
            again = await elsewhere.post("/auth/register", json={"email": "b@example.com", **body})
            assert again.status_code == 202


async def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(
    make_settings: SettingsFactory,
) -> None:
    """From a trusted proxy the address is the client's (X-Forwarded-For), so two clients
    behind one proxy have a budget each; from any other peer the header is ignored."""
    settings = make_settings(registrations_per_address_per_hour=1, trusted_proxies=["10.0.0.0/8"])
    body = {"password": "longenough"}

    async def register(http: httpx.AsyncClient, email: str, forwarded: str) -> int:
        answer = await http.post(
            "/auth/register", json={"email": email, **body}, headers={"X-Forwarded-For": forwarded}
        )
        return answer.status_code

    async with replica(settings) as (app, _):
        async with client(app, "10.1.2.3") as proxy:
            assert await register(proxy, "p1@example.com", "198.51.100.1") == 202
            assert await register(proxy, "p2@example.com", "198.51.100.2") == 202
            assert await register(proxy, "p3@example.com", "198.51.100.1") == 429
        async with client(app, "192.0.2.50") as direct:  # not a proxy: its header is a lie
            assert await register(direct, "d1@example.com", "198.51.100.3") == 202
            assert await register(direct, "d2@example.com", "198.51.100.4") == 429


async def test_login_limits_hold_across_replicas(make_settings: SettingsFactory) -> None:
    settings = make_settings(login_attempts_per_account_per_minute=3)
    async with replica(settings) as (app_a, _), replica(settings) as (app_b, _):
        async with client(app_a) as a, client(app_b, "10.9.9.9") as b:
            tries = [
                await login(a, "user@test.com", "wrong"),
                await login(b, "user@test.com", "wrong"),
                await login(a, "user@test.com", "wrong"),
            ]
            assert statuses(tries) == [401, 401, 401]
            assert_429(await login(b, "user@test.com", "user123"), 40)


# -- /api/* per user ---------------------------------------------------------------------------


def api_settings(
    make_settings: SettingsFactory, upstreams: Upstreams, **overrides: Any
) -> Settings:
    values: dict[str, Any] = {
        "submission_url": upstreams.submission.url,
        "dashboard_url": upstreams.dashboard.url,
        "api_limit_flush_seconds": 3600.0,  # the tests flush by hand
    }
    values.update(overrides)
    return make_settings(**values)


async def bearer(http: httpx.AsyncClient, email: str, password: str) -> dict[str, str]:
    response = await login(http, email, password)
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


async def test_api_requests_are_limited_per_user(
    make_settings: SettingsFactory, upstreams: Upstreams
) -> None:
    settings = api_settings(make_settings, upstreams, api_requests_per_minute=5)
    async with replica(settings) as (app, clock), client(app) as http:
        user = await bearer(http, "user@test.com", "user123")
        admin = await bearer(http, "admin@test.com", "admin123")
        answers = [await http.get("/api/jobs", headers=user) for _ in range(5)]
        assert statuses(answers) == [200] * 5
        assert_429(await http.get("/api/jobs", headers=user), 40)
        assert_429(await http.post("/api/jobs", headers=user, json={}), 40)
        assert len(upstreams.dashboard.calls()) == 5
        assert upstreams.submission.calls() == []
        assert (await http.get("/api/jobs", headers=admin)).status_code == 200  # per user
        assert (await http.get("/auth/me", headers=user)).status_code == 200  # /api only
        clock.now += 40
        assert (await http.get("/api/jobs", headers=user)).status_code == 200


async def test_the_api_limit_holds_across_replicas_within_one_flush(
    make_settings: SettingsFactory, upstreams: Upstreams
) -> None:
    settings = api_settings(make_settings, upstreams, api_requests_per_minute=6)
    async with replica(settings) as (app_a, _), replica(settings) as (app_b, _):
        async with client(app_a) as a, client(app_b) as b:
            token = await bearer(a, "user@test.com", "user123")
            first = [await a.get("/api/jobs", headers=token) for _ in range(3)]
            assert statuses(first) == [200] * 3
            assert await app_a.state.api_rate_limit.flush() == 1
            # B has not seen A's three: it admits three of its own, then learns the total
            second = [await b.get("/api/jobs", headers=token) for _ in range(3)]
            assert statuses(second) == [200] * 3
            await app_b.state.api_rate_limit.flush()
            assert_429(await b.get("/api/jobs", headers=token), 40)
            # A learns the total with its next flush: one more request is the tolerance
            assert (await a.get("/api/jobs", headers=token)).status_code == 200
            await app_a.state.api_rate_limit.flush()
            assert_429(await a.get("/api/jobs", headers=token), 40)
            assert len(upstreams.dashboard.calls()) == 7


async def counter_rows(url: str, scope: str) -> list[tuple[str, int]]:
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            "SELECT key, hits FROM gateway.rate_limit_counters WHERE scope = $1 ORDER BY key",
            scope,
        )
    finally:
        await connection.close()
    return [(r["key"], r["hits"]) for r in rows]


async def test_the_replica_flushes_its_counts_in_the_background(
    make_settings: SettingsFactory, upstreams: Upstreams, gateway_database_url: str
) -> None:
    settings = api_settings(make_settings, upstreams, api_limit_flush_seconds=0.05)
    async with replica(settings) as (app, _), client(app) as http:
        response = await login(http, "user@test.com", "user123")
        user_id, token = response.json()["user"]["id"], response.json()["token"]
        for _ in range(2):
            answer = await http.get("/api/jobs", headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 200

        async def flushed() -> list[tuple[str, int]] | None:
            rows = await counter_rows(gateway_database_url, "api_user")
            return rows if rows == [(user_id, 2)] else None

        await eventually(flushed, timeout=10, what="the two requests counted in PostgreSQL")


async def test_zero_turns_the_api_limit_off(
    make_settings: SettingsFactory, upstreams: Upstreams, gateway_database_url: str
) -> None:
    settings = api_settings(make_settings, upstreams, api_requests_per_minute=0)
    async with replica(settings) as (app, _), client(app) as http:
        token = await bearer(http, "user@test.com", "user123")
        answers = [await http.get("/api/jobs", headers=token) for _ in range(20)]
        assert statuses(answers) == [200] * 20
        assert await app.state.api_rate_limit.flush() == 0
    assert await counter_rows(gateway_database_url, "api_user") == []
