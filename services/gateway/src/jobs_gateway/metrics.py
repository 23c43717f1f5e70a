"""Prometheus metric objects (the only things built at import time)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

HTTP_REQUESTS = Counter(
    "gateway_http_requests_total",
    "HTTP requests answered by the gateway",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "gateway_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
UPSTREAM_CALLS = Counter(
    "gateway_upstream_requests_total",
    "Calls proxied to a backend, by outcome (ok, error_status, unavailable, timeout)",
    ["upstream", "outcome"],
)
LOGIN_ATTEMPTS = Counter(
    "gateway_login_attempts_total",
    "Login attempts by outcome (success, invalid_credentials, rate_limited)",
    ["outcome"],
)
