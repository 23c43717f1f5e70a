"""Prometheus metric objects (the only things built at import time). HTTP request counts and
latency are the shared ``http_requests_total`` / ``http_request_duration_seconds``
(``jobs_common.http_metrics``)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

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
WS_CONNECTIONS = Gauge("gateway_ws_connections", "Open live-event WebSocket connections")
WS_FRAMES_SENT = Counter(
    "gateway_ws_frames_sent_total",
    "Frames sent on live-event WebSockets, by type (hello, job.changes, job.logs, subscribed, ...)",
    ["type"],
)
WS_SLOW_CLOSED = Counter(
    "gateway_ws_slow_closed_total",
    "Live-event WebSockets closed with 1013 because their send queue was full",
)
WS_CLOSED = Counter(
    "gateway_ws_closed_total",
    "Live-event WebSockets closed by the gateway, by close code",
    ["code"],
)
LIVE_EVENTS_RECEIVED = Counter(
    "gateway_live_events_received_total",
    "Messages taken from the replica's live-events queue, by type (job.changes, job.logs, invalid)",
    ["type"],
)
LIVE_EVENTS_BOUND = Gauge(
    "gateway_live_events_bound",
    "1 while the replica's live-events queue is bound to this routing key (someone listens)",
    ["routing_key"],
)
LIVE_EVENTS_CONNECTED = Gauge(
    "gateway_live_events_connected",
    "1 while the live-events consumer is connected to RabbitMQ and consuming, else 0",
)
