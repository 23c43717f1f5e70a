"""Prometheus metric objects: the only things this package builds at import time.

HTTP request counts and latency are the shared ``http_requests_total`` /
``http_request_duration_seconds`` (``jobs_common.http_metrics``). The platform gauges below are
set by :mod:`jobs_dashboard.app.gauges` on a timer, never computed per scrape.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

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

QUEUE_DEPTH = Gauge(
    "queue_depth",
    "Ready messages waiting in each ready queue, as the broker reported at the last refresh "
    "(absent while the broker does not answer).",
    ["queue"],
)
QUEUE_OLDEST_READY_AGE = Gauge(
    "queue_oldest_ready_age_seconds",
    "Age of the oldest queued job of each ready queue (the database clock, at the last "
    "refresh); 0 when none is queued.",
    ["queue"],
)
QUEUE_TIME_TO_DRAIN = Gauge(
    "queue_time_to_drain_seconds",
    "Estimate: queue_depth divided by the queue's recent completion rate (attempts of its "
    "priority that ended per second over DASHBOARD_DRAIN_RATE_WINDOW_SECONDS); 0 when the "
    "queue is empty, absent when nothing completed lately or the depth is unknown.",
    ["queue"],
)
# A project's queues (docs/flow-control.md), by project id and queue name, at the last refresh.
_PROJECT_QUEUE = ["project", "queue"]
QUEUE_WAITING = Gauge(
    "queue_waiting",
    "Unfinished jobs of a project's queue that are not running (queued, scheduled, blocked).",
    _PROJECT_QUEUE,
)
QUEUE_RUNNING = Gauge("queue_running", "Jobs of a project's queue running now.", _PROJECT_QUEUE)
QUEUE_LIMIT = Gauge(
    "queue_limit",
    "A project's queue's maxConcurrency (absent: no limit).",
    _PROJECT_QUEUE,
)
QUEUE_PAUSED = Gauge("queue_paused", "1 while a project's queue is paused, else 0.", _PROJECT_QUEUE)
QUEUE_OLDEST_WAITING = Gauge(
    "queue_oldest_waiting_seconds",
    "Age of the oldest queued job of a project's queue (the database clock); 0 when none.",
    _PROJECT_QUEUE,
)
DLQ_SIZE = Gauge(
    "dlq_size", "Open dead letters (neither requeued nor discarded), at the last refresh."
)
WORKER_UP = Gauge(
    "worker_up",
    "1 for a worker whose last heartbeat is within DASHBOARD_WORKER_DEAD_AFTER_SECONDS of how "
    "far the scheduler has read heartbeats, 0 for one dead within the last hour; older ones are "
    "not listed. While no scheduler replica reads heartbeats no worker is judged and each keeps "
    "its last value (one never judged has no series).",
    ["worker"],
)
WORKERS_UP = Gauge("workers_up", "Live workers (the sum of worker_up), at the last refresh.")
GAUGE_REFRESH_ERRORS = Counter(
    "dashboard_gauge_refresh_errors_total",
    "Refreshes of a platform gauge that failed (logged; the gauge keeps its last value).",
    ["gauge"],
)
