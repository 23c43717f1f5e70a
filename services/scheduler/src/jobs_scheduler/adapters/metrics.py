"""Prometheus metrics of the scheduler (process-wide, registered once at import).

The job outcome series (``jobs_succeeded_total``, ``jobs_failed_total``, ``jobs_dead_total``,
``job_run_seconds``, ``job_queue_wait_seconds``) are counted here and nowhere else in the
platform: the scheduler applies every outcome and decides whether a failure ends the job.
They are counted from what a transaction committed (``adapters/job_metrics.py``), so a
batch rolled back and applied again counts once.
"""

from prometheus_client import Counter, Gauge, Histogram

from jobs_common import outbox_metrics

# From 5 ms to an hour: quick handlers and the longest timeouts alike.
JOB_SECONDS_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600
)  # fmt: skip

MESSAGES = Counter(
    "scheduler_messages_total",
    "Messages consumed, by queue and outcome (applied, stale, duplicate, poison).",
    ["queue", "outcome"],
)
LOCK_CONFLICTS = Counter(
    "scheduler_lock_conflicts_total",
    "Consumed batches tried again in place after a deadlock or serialization failure, by queue.",
    ["queue"],
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
OUTBOX_ABANDONED = Counter(
    "scheduler_outbox_dispatches_dropped_total",
    "Dispatches whose publish failed after it was sent (the broker may hold them): sent again "
    "as copies by the next relay pass.",
)
DISPATCHES_WAITING = Counter(
    "scheduler_dispatches_waiting_total",
    "Dispatches not published because no live worker serves their job's type: the job waits.",
)
OUTBOX_COPIES = Counter(
    "scheduler_outbox_copies_total",
    "Dispatches published again as copies (x-jobs-copy) because the broker may have had the "
    "first one; a worker claims a copy before it runs it.",
)
# outbox_pending{service="scheduler"}: outbox rows the last relay pass of this replica claimed
# (at most SCHEDULER_RELAY_BATCH_SIZE; rows locked by another replica are not seen).
OUTBOX_PENDING = outbox_metrics.OUTBOX_PENDING.labels(service="scheduler")
READY_WINDOW_FULL = Gauge(
    "scheduler_ready_window_full",
    "1 while a ready queue holds a full window (SCHEDULER_READY_WINDOW) and this replica's relay "
    "keeps the queue's further dispatches in the outbox (docs/flow-control.md, fair dispatch).",
    ["queue"],
)
PROMOTED = Counter("scheduler_promoted_total", "Scheduled jobs dispatched when due.")
LEASES_EXPIRED = Counter(
    "lease_expirations_total",
    "Running attempts the reaper found with an expired lease (their worker stopped renewing it).",
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
CONSUMERS_MENDED = Counter(
    "scheduler_consumers_mended_total",
    "Queues consumed again on a new channel after their consumer was found gone.",
    ["queue"],
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

JOBS_DISPATCHED = Counter(
    "jobs_dispatched_total",
    "Ready messages (JobDispatch) the outbox relay published and the broker confirmed, by ready "
    "queue.",
    ["queue"],
)
JOBS_SUCCEEDED = Counter("jobs_succeeded_total", "Jobs that succeeded, by job type.", ["type"])
JOBS_FAILED = Counter(
    "jobs_failed_total",
    "Failed attempts (a worker's failure, a timeout, a lost lease), by job type and whether "
    "the failure ended the job (terminal=true) or it will be retried (terminal=false).",
    ["type", "terminal"],
)
JOBS_DEAD = Counter(
    "jobs_dead_total",
    "Jobs that ended dead, by dead-letter reason (max_attempts, permanent_error, unprocessable, "
    "lease_expired, ttl_expired, dependency_failed, poison).",
    ["reason"],
)
JOB_RUN_SECONDS = Histogram(
    "job_run_seconds",
    "Run time of attempts that ended with a worker's result (started to finished, as the "
    "worker reported), by job type.",
    ["type"],
    buckets=JOB_SECONDS_BUCKETS,
)
JOB_QUEUE_WAIT_SECONDS = Histogram(
    "job_queue_wait_seconds",
    "Time an attempt waited in its ready queue: from its dispatch (jobs.queued_at) to its start "
    "on a worker, by job type and priority.",
    ["type", "priority"],
    buckets=JOB_SECONDS_BUCKETS,
)

ROLLUP_FOLDED = Counter(
    "scheduler_rollup_deltas_folded_total",
    "Rollup deltas (appended by the triggers on jobs) folded into the rollup tables.",
)
RETENTION_PRUNED = Counter(
    "scheduler_retention_pruned_total",
    "Rows removed by retention, by table (a job's attempts, events and resolved dead letters "
    "go with it and are not counted apart).",
    ["table"],
)
RETENTION_OLDEST = Gauge(
    "scheduler_retention_oldest_finished_seconds",
    "Age of the oldest finished job still kept, by status (pruning keeps it below the "
    "status's retention, unless something still needs the job).",
    ["status"],
)
RETENTION_BEHIND = Gauge(
    "scheduler_retention_behind_seconds",
    "How long past its retention the oldest finished job that may go is still kept, by "
    "status (0: pruning keeps up).",
    ["status"],
)
# The job store's health (app/store_upkeep.py), refreshed by the store_stats loop.
JOBSTORE_DEAD_ROWS = Gauge(
    "jobstore_dead_rows",
    "Dead rows in a job store table (pg_stat_user_tables.n_dead_tup): what VACUUM has not "
    "reclaimed yet.",
    ["table"],
)
JOBSTORE_AUTOVACUUM = Gauge(
    "jobstore_autovacuum_enabled",
    "1 when PostgreSQL's autovacuum looks after the table (on for the server and the table), "
    "else 0.",
    ["table"],
)
STORE_MAINTENANCE = Counter(
    "scheduler_store_maintenance_total",
    "ANALYZE and VACUUM (ANALYZE) runs the scheduler made on tables the retention pruned.",
    ["table", "action"],
)
