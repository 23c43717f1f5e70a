"""Prometheus metric objects (the only things built at import time)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

JOBS_STARTED = Counter(
    "jobs_started_total",
    "Job attempts whose handler this worker started (a redelivered attempt counts again), by "
    "job type (unknown for a type without a handler)",
    ["type"],
)
JOBS_FINISHED = Counter(
    "worker_jobs_finished_total",
    "Job attempts finished on this worker (result published)",
    ["job_type", "outcome", "error_kind"],
)
JOB_DURATION = Histogram(
    "worker_job_duration_seconds",
    "Handler run time of a job attempt",
    ["job_type"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)
ACTIVE_JOBS = Gauge(
    "worker_active_jobs",
    "Ready-queue deliveries this worker is processing right now (starting, running the "
    "handler, or reporting the result)",
)
POISON_MESSAGES = Counter(
    "worker_poison_messages_total", "Ready-queue messages rejected as unparseable", ["queue"]
)
PUBLISH_FAILURES = Counter(
    "worker_publish_failures_total",
    "Running/result publishes that were not confirmed (delivery handed back)",
    ["message_type"],
)
ABANDONED = Counter(
    "worker_jobs_abandoned_total", "Jobs left unacked at shutdown (redelivered elsewhere)"
)
HEARTBEATS = Counter(
    "worker_heartbeats_total", "Heartbeats published to jobs.heartbeat", ["outcome"]
)
CANCELLATIONS = Counter(
    "worker_cancellations_total",
    "Cancel requests applied: a running attempt stopped, or a cancelled delivery not started",
    ["where"],
)
CLAIMS = Counter(
    "worker_claims_total",
    "Answers to claims of redelivered attempts (run, skip, wait, unanswered)",
    ["verdict"],
)
HANDED_BACK = Counter(
    "worker_jobs_handed_back_total",
    "Deliveries of a job type this worker does not serve, handed back to the scheduler",
)
RESULTS_KEPT = Counter(
    "worker_results_kept_total",
    "Results the broker did not confirm, kept and published again",
)
CONTROL_MESSAGES = Counter(
    "worker_control_messages_total", "Messages received on the control queue", ["type"]
)
LOG_LINES_PUBLISHED = Counter(
    "worker_job_log_lines_published_total", "Job log lines published to jobs.logs"
)
LOG_LINES_DROPPED = Counter(
    "worker_job_log_lines_dropped_total",
    "Job log lines dropped (queue full, publish failed, worker stopping)",
    ["reason"],
)
HANDED_BACK_QUIET = Counter(
    "worker_quiet_handed_back_total",
    "Deliveries not started when the worker went quiet, handed back for another worker",
)
WORKER_MODE = Gauge(
    "worker_quiet",
    "1 while an admin's quiet or stop keeps this worker from taking new jobs",
)
