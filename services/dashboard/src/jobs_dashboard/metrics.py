"""Prometheus metric objects: the only things this package builds at import time."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

HTTP_REQUESTS = Counter(
    "dashboard_http_requests_total",
    "HTTP requests answered, by route template, method and status code.",
    ["route", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "dashboard_http_request_duration_seconds",
    "HTTP request latency by route template and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
COMMANDS_PUBLISHED = Counter(
    "dashboard_commands_published_total",
    "Commands published to RabbitMQ, by command and outcome (confirmed or failed).",
    ["command", "outcome"],
)
DEAD_LETTER_ACTIONS = Counter(
    "dashboard_dead_letter_actions_total",
    "Dead-letter actions taken (requeue, discard, bulk_requeue, bulk_discard).",
    ["action"],
)
