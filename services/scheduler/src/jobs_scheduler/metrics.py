"""Prometheus metrics of the scheduler (process-wide, registered once at import)."""

from prometheus_client import Counter, Gauge, Histogram

MESSAGES = Counter(
    "scheduler_messages_total",
    "Messages consumed, by queue and outcome (applied, stale, duplicate, poison).",
    ["queue", "outcome"],
)
BATCH_SIZE = Histogram(
    "scheduler_batch_size",
    "Messages applied per transaction.",
    ["queue"],
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500),
)
TRANSITIONS = Counter(
    "scheduler_transitions_total", "Job status transitions.", ["from_status", "to_status"]
)
OUTBOX_PUBLISHED = Counter("scheduler_outbox_published_total", "Outbox messages confirmed.")
OUTBOX_FAILED = Counter("scheduler_outbox_failed_total", "Outbox publishes refused or failed.")
OUTBOX_PENDING = Gauge("scheduler_outbox_pending", "Outbox rows seen by the last relay pass.")
PROMOTED = Counter("scheduler_promoted_total", "Scheduled jobs dispatched when due.")
REAPED = Counter("scheduler_reaped_total", "Running attempts reaped after their lease expired.")
LOOP_ERRORS = Counter(
    "scheduler_loop_errors_total", "Background loop iterations that failed.", ["loop"]
)
