"""Which headers cross the gateway, in each direction.

Requests: an allow list (content negotiation, idempotency, tracing). Everything else is dropped,
in particular a client's ``X-User-*`` / ``X-Internal-Token`` (spoofed identity), its
``Authorization`` (backends never see client tokens) and hop-by-hop headers. The verified
identity and the internal token are added last, so nothing a client sends can override them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jobs_common.api_models import REPLAYED_HEADER
from jobs_common.auth import IDENTITY_HEADERS, Identity

REQUEST_ID_HEADER = "x-request-id"
TRACE_ID_HEADER = "x-trace-id"

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)

FORWARDED_REQUEST_HEADERS = frozenset(
    {
        "content-type",
        "accept",
        "accept-language",
        "idempotency-key",
        "if-match",
        "if-none-match",
        "user-agent",
        REQUEST_ID_HEADER,
        TRACE_ID_HEADER,
        "traceparent",
        "tracestate",
        "baggage",
    }
)

FORWARDED_RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "location",
        "retry-after",
        "etag",
        "cache-control",
        "last-modified",
        "allow",
        REPLAYED_HEADER.lower(),
    }
)


def _is_identity(name: str) -> bool:
    return name in IDENTITY_HEADERS or name.startswith("x-user-")


def upstream_request_headers(
    client_headers: Iterable[tuple[str, str]],
    *,
    identity: Identity,
    internal_token: str,
    request_id: str,
    client_ip: str | None,
    trace_id: str | None = None,
) -> dict[str, str]:
    """The headers sent upstream; ``trace_id`` (the gateway's, see ``api.middleware``) replaces
    whatever ``X-Trace-Id`` the client sent, so every backend logs and records the same one."""
    headers: dict[str, str] = {}
    forwarded_for: list[str] = []
    for raw_name, value in client_headers:
        name = raw_name.lower()
        if name == "x-forwarded-for":
            forwarded_for.append(value)
            continue
        if name in HOP_BY_HOP or _is_identity(name) or name not in FORWARDED_REQUEST_HEADERS:
            continue
        headers[name] = value
    if client_ip:
        forwarded_for.append(client_ip)
    if forwarded_for:
        headers["x-forwarded-for"] = ", ".join(forwarded_for)
    headers[REQUEST_ID_HEADER] = request_id
    if trace_id is not None:
        headers[TRACE_ID_HEADER] = trace_id
    headers.update(identity.headers(internal_token))
    return headers


def client_response_headers(upstream_headers: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in ((k.lower(), v) for k, v in upstream_headers.items())
        if name in FORWARDED_RESPONSE_HEADERS
    }
