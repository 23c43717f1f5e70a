"""Every app that installs the error handlers refuses input the stores cannot hold
(``jobs_common.storable_input``): a NUL or a lone surrogate in a body FastAPI decodes, a
NUL or non-UTF-8 bytes in the path or the query string, a NUL in a header; before its
route (and the route's own dependencies) run."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import pytest
from fastapi import Depends, FastAPI, Query, Request, WebSocket
from pydantic import BaseModel

from jobs_common.error_handlers import install_error_handlers
from jobs_common.storable_input import refuse_unstorable_body
from jobs_common.storable_text import NUL_MESSAGE, UNPARSABLE_BODY

pytestmark = pytest.mark.unit


class Login(BaseModel):
    email: str
    password: str
    extra: dict[str, Any] = {}


def app(seen: list[str]) -> FastAPI:
    application = FastAPI()
    install_error_handlers(application)

    async def route_dependency() -> None:
        seen.append("dependency")

    @application.post("/login", dependencies=[Depends(route_dependency)])
    async def login(body: Login) -> dict[str, str]:
        seen.append("route")
        return {"email": body.email}

    @application.get("/items/{name}")
    async def item(name: str, q: Annotated[str | None, Query()] = None) -> dict[str, Any]:
        seen.append("route")
        return {"name": name, "q": q}

    @application.post("/raw")
    async def raw(request: Request) -> dict[str, int]:
        seen.append("route")
        return {"bytes": len(await request.body())}

    @application.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text("hello")
        await socket.close()

    return application


async def call(method: str, url: str, **kwargs: Any) -> tuple[httpx.Response, list[str]]:
    seen: list[str] = []
    transport = httpx.ASGITransport(app=app(seen))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.request(method, url, **kwargs), seen


def login_body(email: str, extra: str = "{}") -> bytes:
    return f'{{"email": "{email}", "password": "pw", "extra": {extra}}}'.encode()


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (login_body("a\\u0000b@x.com"), "email"),
        (login_body("a@x.com", '{"k": ["ok", "\\u0000"]}'), "extra.k.1"),
        (login_body("a@x.com", '{"k\\u0000": 1}'), "extra.k\\x00"),
    ],
)
async def test_a_nul_in_a_decoded_body_is_a_422_before_any_dependency(
    content: bytes, field: str
) -> None:
    response, seen = await call("POST", "/login", content=content, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "validation_error"
    assert response.json()["details"] == [
        {
            "field": field,
            "message": f"object key {NUL_MESSAGE}" if "k\\x00" in field else NUL_MESSAGE,
        }
    ]
    assert seen == []


@pytest.mark.parametrize(
    "content",
    [
        login_body("\\ud800@x.com"),
        login_body("a@x.com", '{"\\udfff": 1}'),
        b'{"email": "\xed\xa0\x80", "password": "pw"}',  # the surrogate as UTF-8 bytes
    ],
)
async def test_a_lone_surrogate_in_a_decoded_body_is_a_400(content: bytes) -> None:
    response, seen = await call("POST", "/login", content=content, headers=JSON)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "bad_request"
    assert body["message"].startswith(UNPARSABLE_BODY)
    assert len(body["details"]) == 1
    assert seen == []


async def test_storable_bodies_and_routes_without_a_body_model_pass() -> None:
    response, seen = await call(
        "POST", "/login", content=login_body("é@x.com", '{"t": "tab\\t😀"}'), headers=JSON
    )
    assert (response.status_code, seen) == (200, ["dependency", "route"])
    # a route that reads its body itself checks it itself (jobs_common.storable_text)
    response, seen = await call("POST", "/raw", content=b'{"a": "\\u0000"}', headers=JSON)
    assert (response.status_code, seen) == (200, ["route"])
    # what FastAPI cannot decode keeps its own answer
    response, _ = await call("POST", "/login", content=b"{not json", headers=JSON)
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("url", "status", "field"),
    [
        ("/items/a%00b", 422, "path"),
        ("/items/a%ED%A0%80", 400, "path"),
        ("/items/x?q=a%00b", 422, "q"),
        ("/items/x?q=a+%00", 422, "q"),
        ("/items/x?other=1&q%00=1", 422, "q\\x00"),
        ("/items/x?q=%ED%A0%80", 400, "q"),
        ("/items/x?q=%FF", 400, "q"),
    ],
)
async def test_the_url_is_checked_before_routing(url: str, status: int, field: str) -> None:
    response, seen = await call("GET", url)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == ("validation_error" if status == 422 else "bad_request")
    assert [d["field"] for d in body["details"]] == [field]
    assert seen == []


@pytest.mark.parametrize("url", ["/items/h%C3%A9llo?q=%E2%9C%93+x&empty=&flag", "/items/x?q=%25"])
async def test_a_utf8_url_passes(url: str) -> None:
    response, seen = await call("GET", url)
    assert (response.status_code, seen) == (200, ["route"])


async def test_a_nul_in_a_header_is_a_422_naming_it() -> None:
    seen: list[str] = []
    application = app(seen)
    scope_headers = [(b"host", b"test"), (b"idempotency-key", b"a\x00b")]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/items/x",
        "raw_path": b"/items/x",
        "query_string": b"",
        "headers": scope_headers,
        "server": ("test", 80),
        "client": ("127.0.0.1", 1),
        "root_path": "",
    }
    await application(scope, receive, send)
    assert sent[0]["status"] == 422
    assert b'"field":"Idempotency-Key"' in sent[1]["body"]
    assert seen == []


def test_every_route_carries_the_body_check() -> None:
    for route in app([]).routes:
        dependant = getattr(route, "dependant", None)
        if dependant is not None:
            calls = [d.call for d in dependant.dependencies]
            assert refuse_unstorable_body in calls, route


async def test_a_websocket_route_still_connects() -> None:
    incoming = [{"type": "websocket.connect"}, {"type": "websocket.disconnect", "code": 1000}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "websocket",
        "asgi": {"version": "3.0"},
        "path": "/ws",
        "raw_path": b"/ws",
        "query_string": b"",
        "headers": [(b"host", b"test")],
        "scheme": "ws",
        "server": ("test", 80),
        "client": ("127.0.0.1", 1),
        "root_path": "",
        "subprotocols": [],
    }
    await app([])(scope, receive, send)
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.send", "websocket.close"]
