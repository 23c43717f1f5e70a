"""The gateway's trace id: taken from the client (X-Trace-Id, else traceparent) or made here,
bound to the log context while the request is served, answered, and forwarded upstream."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from jobs_common import log_context
from jobs_common.auth import Identity
from jobs_gateway.api.middleware import RequestContextMiddleware
from jobs_gateway.domain.headers import upstream_request_headers

pytestmark = pytest.mark.unit


async def serve(headers: list[tuple[bytes, bytes]]) -> tuple[dict[str, Any], dict[bytes, bytes]]:
    """(the log context the app saw, the response headers)."""
    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.update(log_context.current(), state_trace_id=scope["state"]["trace_id"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/x", "headers": headers}
    await RequestContextMiddleware(app)(scope, receive, send)
    return seen, dict(sent[0]["headers"])


async def test_the_client_trace_id_is_bound_answered_and_kept() -> None:
    seen, answered = await serve([(b"x-trace-id", b"my-trace"), (b"x-request-id", b"rid-7")])
    assert seen == {"trace_id": "my-trace", "request_id": "rid-7", "state_trace_id": "my-trace"}
    assert answered[b"x-trace-id"] == b"my-trace"
    assert log_context.current() == {}


async def test_a_traceparent_gives_its_trace_id() -> None:
    traceparent = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    seen, _ = await serve([(b"traceparent", traceparent)])
    assert seen["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"


async def test_without_one_the_gateway_makes_a_trace_id() -> None:
    seen, answered = await serve([(b"x-trace-id", b"not valid!")])
    assert len(seen["trace_id"]) == 32
    assert answered[b"x-trace-id"] == seen["trace_id"].encode()


async def test_the_request_log_line_carries_the_trace_id(caplog: pytest.LogCaptureFixture) -> None:
    caplog.handler.addFilter(log_context.LogContextFilter())
    with caplog.at_level(logging.INFO, logger="jobs_gateway.api.middleware"):
        await serve([(b"x-trace-id", b"logged-trace")])
    (record,) = [r for r in caplog.records if r.getMessage() == "request"]
    assert record.trace_id == "logged-trace"  # type: ignore[attr-defined]


def test_the_gateway_trace_id_replaces_the_clients_upstream() -> None:
    headers = upstream_request_headers(
        [("X-Trace-Id", "client-value"), ("traceparent", "00-abc")],
        identity=Identity(user_id="u-1", email="bob@x.io", role="user"),
        internal_token="secret-token",
        request_id="rid-1",
        client_ip=None,
        trace_id="gateway-trace",
    )
    assert headers["x-trace-id"] == "gateway-trace"
    assert headers["traceparent"] == "00-abc"
