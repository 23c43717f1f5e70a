"""Which headers reach the backends and which come back to the client."""

from __future__ import annotations

import pytest

from jobs_common.auth import Identity
from jobs_gateway.domain.headers import client_response_headers, upstream_request_headers

pytestmark = pytest.mark.unit

BOB = Identity(user_id="u-1", email="bob@x.io", role="user")


def forward(headers: list[tuple[str, str]], client_ip: str | None = "10.0.0.9") -> dict[str, str]:
    return upstream_request_headers(
        headers,
        identity=BOB,
        internal_token="secret-token",
        request_id="rid-1",
        client_ip=client_ip,
    )


def test_spoofed_identity_headers_are_replaced_by_the_verified_identity() -> None:
    result = forward(
        [
            ("X-User-Role", "admin"),
            ("x-user-email", "root@x.io"),
            ("X-User-Id", "0"),
            ("X-User-Anything", "1"),
            ("X-Internal-Token", "guess"),
        ]
    )
    assert result["x-user-role"] == "user"
    assert result["x-user-email"] == "bob@x.io"
    assert result["x-user-id"] == "u-1"
    assert result["x-internal-token"] == "secret-token"
    assert "x-user-anything" not in result


def test_hop_by_hop_authorization_and_unknown_headers_are_dropped() -> None:
    result = forward(
        [
            ("Connection", "keep-alive, x-foo"),
            ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"),
            ("TE", "trailers"),
            ("Upgrade", "websocket"),
            ("Host", "evil"),
            ("Content-Length", "12"),
            ("Authorization", "Bearer token"),
            ("Cookie", "a=b"),
            ("X-Foo", "bar"),
        ]
    )
    assert set(result) == {
        "x-forwarded-for",
        "x-request-id",
        "x-user-id",
        "x-user-email",
        "x-user-role",
        "x-internal-token",
    }


def test_content_idempotency_and_trace_headers_are_forwarded() -> None:
    result = forward(
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Idempotency-Key", "k-1"),
            ("traceparent", "00-abc-def-01"),
            ("X-Request-Id", "client-chosen"),
            ("X-Forwarded-For", "1.1.1.1"),
        ]
    )
    assert result["content-type"] == "application/json"
    assert result["accept"] == "application/json"
    assert result["idempotency-key"] == "k-1"
    assert result["traceparent"] == "00-abc-def-01"
    assert result["x-request-id"] == "rid-1"  # the gateway's id wins
    assert result["x-forwarded-for"] == "1.1.1.1, 10.0.0.9"


def test_response_headers_keep_content_type_and_drop_the_rest() -> None:
    result = client_response_headers(
        {
            "Content-Type": "application/problem+json",
            "Location": "/api/jobs/1",
            "Set-Cookie": "a=b",
            "Connection": "close",
            "Content-Length": "3",
            "Server": "uvicorn",
        }
    )
    assert result == {"content-type": "application/problem+json", "location": "/api/jobs/1"}


def test_a_replayed_submission_says_so_through_the_gateway() -> None:
    result = client_response_headers(
        {"Content-Type": "application/json", "Idempotent-Replayed": "true"}
    )
    assert result["idempotent-replayed"] == "true"
