"""The console's session cookie against real PostgreSQL: login sets it (HttpOnly, Secure,
SameSite=Strict, Path=/auth), refresh rotates it with the same reuse detection as the JSON
mode, logout revokes and clears it, and a request from another origin or site is refused
before anything changes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.cookies import SimpleCookie
from typing import Any

import asyncpg
import httpx
import pytest

from jobs_gateway.service import create_app

from ..conftest import SettingsFactory

pytestmark = pytest.mark.integration

ORIGIN = "https://console.example"
OPT_IN = {"X-Session-Cookie": "1", "Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"}
CREDENTIALS = {"email": "user@test.com", "password": "user123"}


@asynccontextmanager
async def served(
    make_settings: SettingsFactory, **overrides: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway as the console at ``ORIGIN`` sees it (over https); cookies are sent by hand."""
    app = create_app(make_settings(**overrides))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.1.2.3", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
            yield client


@pytest.fixture
async def console(make_settings: SettingsFactory) -> AsyncIterator[httpx.AsyncClient]:
    async with served(make_settings) as client:
        yield client


@pytest.fixture
async def database(gateway_database_url: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(gateway_database_url)
    yield connection
    await connection.close()


async def post(
    client: httpx.AsyncClient,
    path: str,
    *,
    cookie: str | None = None,
    headers: dict[str, str] | None = None,
    **kwargs: Any,
) -> httpx.Response:
    client.cookies.clear()  # only what the test sends
    sent = dict(OPT_IN if headers is None else headers)
    if cookie is not None:
        sent["Cookie"] = f"jobs_refresh={cookie}"
    return await client.post(path, headers=sent, **kwargs)


def set_cookie(response: httpx.Response) -> tuple[str, dict[str, Any]]:
    """The session cookie's value and attributes as the answer sets them."""
    (header,) = response.headers.get_list("set-cookie")
    morsel = SimpleCookie(header)["jobs_refresh"]
    return morsel.value, {k: v for k, v in morsel.items() if v}


async def log_in(client: httpx.AsyncClient, cookie: str | None = None) -> str:
    response = await post(client, "/auth/login", json=CREDENTIALS, cookie=cookie)
    assert response.status_code == 200, response.text
    assert response.json()["refreshToken"] is None  # the script on the page never sees it
    value, _ = set_cookie(response)
    return value


async def families(database: asyncpg.Connection) -> dict[str, bool]:
    """Each session family of the demo user: whether it is revoked."""
    rows = await database.fetch(
        "SELECT family_id::text, bool_and(revoked_at IS NOT NULL) AS revoked "
        "FROM gateway.refresh_tokens GROUP BY family_id"
    )
    return {r["family_id"]: r["revoked"] for r in rows}


async def test_login_sets_an_http_only_strict_cookie_scoped_to_auth(
    console: httpx.AsyncClient,
) -> None:
    response = await post(console, "/auth/login", json=CREDENTIALS)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (
        body["refreshToken"] is None
        and body["token"]
        and body["user"]["email"] == CREDENTIALS["email"]
    )
    value, attributes = set_cookie(response)
    assert value.count(".") == 2  # a JWT
    assert attributes == {
        "httponly": True,
        "secure": True,
        "samesite": "strict",
        "path": "/auth",
        "max-age": str(7 * 86_400),
    }


@pytest.mark.parametrize(
    ("environment", "setting", "secure"),
    [("development", None, False), ("production", False, False), ("development", True, True)],
)
async def test_the_cookie_is_secure_unless_development_or_the_setting_says_otherwise(
    make_settings: SettingsFactory, environment: str, setting: bool | None, secure: bool
) -> None:
    overrides: dict[str, Any] = {"environment": environment, "session_cookie_secure": setting}
    if environment == "development":
        overrides["seed_demo_users"] = False
    async with served(make_settings, **overrides) as client:
        response = await post(client, "/auth/login", json=CREDENTIALS)
    assert bool(set_cookie(response)[1].get("secure")) is secure


async def test_refresh_rotates_the_cookie_and_a_replayed_one_ends_the_session(
    console: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    first = await log_in(console)
    answer = await post(console, "/auth/refresh", cookie=first)
    assert answer.status_code == 200, answer.text
    assert answer.json()["refreshToken"] is None
    second, attributes = set_cookie(answer)
    assert second != first and attributes["httponly"] and attributes["path"] == "/auth"
    me = await console.get(
        "/auth/me", headers={"Authorization": f"Bearer {answer.json()['token']}"}
    )
    assert me.json()["email"] == CREDENTIALS["email"]

    # a minute later, past the grace for lost answers: a replay
    await database.execute("UPDATE gateway.refresh_tokens SET used_at = used_at - interval '1 min'")
    replay = await post(console, "/auth/refresh", cookie=first)
    assert replay.status_code == 401
    assert list((await families(database)).values()) == [True]  # the whole family
    assert (await post(console, "/auth/refresh", cookie=second)).status_code == 401


async def test_a_cookie_whose_answer_was_lost_works_again_within_the_grace(
    console: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    """A page reloaded while its refresh was out never stored the rotated cookie: the next
    load presents the used one, seconds later. It gets a new cookie; the lost one is dead."""
    first = await log_in(console)
    lost, _ = set_cookie(await post(console, "/auth/refresh", cookie=first))
    again = await post(console, "/auth/refresh", cookie=first)  # F5 once more
    assert again.status_code == 200, again.text
    third, _ = set_cookie(await post(console, "/auth/refresh", cookie=first))  # and again
    assert len({first, lost, third}) == 3
    assert (await post(console, "/auth/refresh", cookie=third)).status_code == 200
    assert list((await families(database)).values()) == [False]
    # the lost answer turning up after all, past the grace, is a replay: the session ends
    await database.execute("UPDATE gateway.refresh_tokens SET used_at = used_at - interval '1 min'")
    assert (await post(console, "/auth/refresh", cookie=lost)).status_code == 401
    assert list((await families(database)).values()) == [True]


@pytest.mark.parametrize(
    "headers",
    [
        {**OPT_IN, "Origin": "https://evil.example"},
        {**OPT_IN, "Origin": "null"},
        {"X-Session-Cookie": "1", "Sec-Fetch-Site": "cross-site"},
    ],
    ids=["other-origin", "opaque-origin", "cross-site"],
)
async def test_a_forged_cookie_request_is_refused_and_changes_nothing(
    console: httpx.AsyncClient, database: asyncpg.Connection, headers: dict[str, str]
) -> None:
    cookie = await log_in(console)
    before = await database.fetch("SELECT * FROM gateway.refresh_tokens ORDER BY id")
    for path, body in (
        ("/auth/refresh", None),
        ("/auth/logout", None),
        ("/auth/login", CREDENTIALS),
    ):
        response = await post(console, path, cookie=cookie, headers=headers, json=body)
        assert response.status_code == 403, (path, response.text)
        assert response.json()["error"] == "forbidden"
        assert set(response.json()) == {"error", "message", "details"}
        assert "set-cookie" not in response.headers
    assert await database.fetch("SELECT * FROM gateway.refresh_tokens ORDER BY id") == before
    assert (await post(console, "/auth/refresh", cookie=cookie)).status_code == 200


async def test_the_consoles_other_origins_and_clients_without_origin_may_use_it(
    make_settings: SettingsFactory,
) -> None:
    async with served(make_settings, cors_origins=["http://localhost:5173"]) as client:
        cookie = await log_in(client)
        dev_server = {"X-Session-Cookie": "1", "Origin": "http://localhost:5173"}
        answer = await post(client, "/auth/refresh", cookie=cookie, headers=dev_server)
        assert answer.status_code == 200, answer.text
        no_origin = {"X-Session-Cookie": "1"}
        answer = await post(
            client, "/auth/refresh", cookie=set_cookie(answer)[0], headers=no_origin
        )
        assert answer.status_code == 200, answer.text


async def test_refresh_without_a_cookie_or_with_a_body_token_is_refused(
    console: httpx.AsyncClient,
) -> None:
    missing = await post(console, "/auth/refresh")
    assert (missing.status_code, missing.json()["message"]) == (401, "no session cookie")
    cookie = await log_in(console)
    both = await post(console, "/auth/refresh", cookie=cookie, json={"refreshToken": cookie})
    assert both.status_code == 422
    assert [d["field"] for d in both.json()["details"]] == ["refreshToken"]
    assert (await post(console, "/auth/refresh", cookie=cookie)).status_code == 200  # unused


async def test_without_the_header_the_cookie_is_ignored(console: httpx.AsyncClient) -> None:
    cookie = await log_in(console)
    plain = {"Origin": ORIGIN}
    answer = await post(console, "/auth/refresh", cookie=cookie, headers=plain, json={})
    assert answer.status_code == 422
    assert [d["field"] for d in answer.json()["details"]] == ["refreshToken"]
    json_login = await post(console, "/auth/login", headers=plain, json=CREDENTIALS)
    assert json_login.json()["refreshToken"] and "set-cookie" not in json_login.headers
    assert (await post(console, "/auth/refresh", cookie=cookie)).status_code == 200


async def test_logout_revokes_the_session_and_clears_the_cookie(
    console: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    cookie = await log_in(console)
    answer = await post(console, "/auth/logout", cookie=cookie)
    assert (answer.status_code, answer.content) == (204, b"")
    value, attributes = set_cookie(answer)
    assert value == "" and attributes["max-age"] == "0" and attributes["path"] == "/auth"
    assert list((await families(database)).values()) == [True]
    assert (await post(console, "/auth/refresh", cookie=cookie)).status_code == 401
    # nothing (left) to end: still 204, the cookie cleared
    for left in (None, cookie, "not-a-token"):
        again = await post(console, "/auth/logout", cookie=left)
        assert again.status_code == 204 and set_cookie(again)[0] == ""


async def test_a_new_login_ends_the_session_its_old_cookie_held(
    console: httpx.AsyncClient, database: asyncpg.Connection
) -> None:
    old = await log_in(console)
    new = await log_in(console, cookie=old)
    assert sorted((await families(database)).values()) == [False, True]
    assert (await post(console, "/auth/refresh", cookie=old)).status_code == 401
    assert (await post(console, "/auth/refresh", cookie=new)).status_code == 200
