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
LEASES_EXPIRED = Counter(
    "scheduler_leases_expired_total", "Running attempts whose worker stopped renewing the lease."
)
TIMEOUTS = Counter("scheduler_timeouts_total", "Running attempts past their timeout.")
RECONCILED = Counter(
    "scheduler_reconciled_total", "Queued jobs re-dispatched because the broker lost the message."
)
CRON_FIRED = Counter("scheduler_cron_fired_total", "Jobs created by cron schedules.")
HEARTBEATS = Counter("scheduler_heartbeats_total", "Worker heartbeats applied.")
LEASES_RENEWED = Counter("scheduler_leases_renewed_total", "Attempt leases renewed by heartbeats.")
LOG_LINES = Counter("scheduler_log_lines_total", "Worker log lines stored.")
LOOP_ERRORS = Counter(
    "scheduler_loop_errors_total", "Background loop iterations that failed.", ["loop"]
)
TICKS = Counter("scheduler_ticks_total", "Read-horizon ticks published, by outcome.", ["outcome"])
CONSUMER_LAG = Gauge(
    "scheduler_consumer_lag_seconds",
    "How far behind this replica reads a queue: now minus the send time of the latest read "
    "tick it applied there (ticks follow every message queued before them).",
    ["queue"],
)
LEASE_HORIZON_LAG = Gauge(
    "scheduler_lease_horizon_lag_seconds",
    "Now minus the lease horizon (the smallest read horizon of the live replicas over the "
    "heartbeat and result queues) at the last reaper pass; leases are judged against it.",
)
REAPER_WAITING = Counter(
    "scheduler_reaper_waiting_total",
    "Reaper passes that judged nothing because some lease queue has no live reader yet.",
)
LIVE_EVENTS = Counter(
    "scheduler_live_events_total",
    "Messages for live views on jobs.events, by routing key and outcome "
    "(published, failed, dropped while too many were in flight).",
    ["routing_key", "outcome"],
)
