"""Request ids, route labels and the last-resort 500 envelope of the request middleware."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from jobs_common.http_metrics import route_template
from jobs_gateway.api.middleware import RequestContextMiddleware

pytestmark = pytest.mark.unit


class FakeRoute:
    path = "/api/{path:path}"


def http_scope(headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/x", "headers": headers or []}


async def run(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await RequestContextMiddleware(app)(scope, receive, send)
    return sent


async def test_unexpected_error_becomes_a_500_envelope_with_request_id() -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("boom")

    sent = await run(broken, http_scope([(b"x-request-id", b"rid-9")]))
    start, body = sent
    assert start["status"] == 500
    assert (b"x-request-id", b"rid-9") in start["headers"]
    assert orjson.loads(body["body"]) == {
        "error": "internal_error",
        "message": "internal error",
        "details": [],
    }


async def test_request_id_replaces_an_upstream_one() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["state"]["request_id"] != "bad id"
        await send(
            {"type": "http.response.start", "status": 204, "headers": [(b"x-request-id", b"up")]}
        )
        await send({"type": "http.response.body", "body": b""})

    sent = await run(app, http_scope([(b"x-request-id", b"bad id")]))
    ids = [v for k, v in sent[0]["headers"] if k == b"x-request-id"]
    assert len(ids) == 1
    assert ids[0] not in (b"up", b"bad id")


def test_route_labels() -> None:
    assert route_template({"route": FakeRoute()}) == "/api/{path}"
    assert route_template({"route": FakeRoute(), "state": {"route_template": "/api/jobs"}}) == (
        "/api/jobs"
    )
    assert route_template({}) == "unmatched"
