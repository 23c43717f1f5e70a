"""Prometheus metrics of the submission service (the only objects built at import time)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from jobs_common import outbox_metrics
from jobs_common.metrics import priority_label as common_priority_label
from jobs_common.metrics import type_label as type_label

JOBS_SUBMITTED = Counter(
    "jobs_submitted_total",
    "Jobs accepted (stored with their outbox entry), single submissions and batch members, "
    "by job type and priority (low, medium, high; queue_default: none named, the queue's "
    "default); idempotent replays not counted again.",
    ["type", "priority"],
)


def priority_label(priority: int | None) -> str:
    """The label of a submitted priority; ``queue_default`` when it named none."""
    return "queue_default" if priority is None else common_priority_label(priority)


SUBMISSIONS = Counter(
    "jobs_submission_submissions_total",
    "Job submissions by job type and outcome (accepted, replayed, conflict, invalid, forbidden, "
    "over_quota).",
    ["type", "outcome"],
)
RELAY_PUBLISHED = Counter(
    "jobs_submission_relay_published_total", "Outbox entries published and confirmed."
)
RELAY_FAILED = Counter(
    "jobs_submission_relay_failed_total", "Outbox publishes that failed (released with backoff)."
)
RELAY_STALE = Counter(
    "jobs_submission_relay_stale_claims_total",
    "Confirmed publishes whose claim had meanwhile expired (another relay may republish).",
)
# outbox_pending{service="submission"}: pending outbox entries (accepted, not yet confirmed
# published; held batch members not included) after this process's last relay pass, counted up
# to SUBMISSION_RELAY_PENDING_COUNT_LIMIT: exact below it, equal to it means at least that many.
OUTBOX_PENDING = outbox_metrics.OUTBOX_PENDING.labels(service="submission")
OUTBOX_OLDEST_PENDING = Gauge(
    "jobs_submission_outbox_oldest_pending_seconds",
    "Age since acceptance of the oldest pending outbox entry seen by this process's last relay "
    "pass, growing with the clock until the next pass; 0 when none was pending.",
)
RELAY_LAG = Histogram(
    "jobs_submission_relay_lag_seconds",
    "Time from acceptance to a confirmed publish.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)

THROTTLED = Counter(
    "jobs_throttled_total",
    "Jobs refused at submission by a project's quota (429): reason max_waiting or "
    "max_submitted_per_day (docs/flow-control.md, quotas).",
    ["reason"],
)
PROJECT_QUOTA_UNKNOWN = Counter(
    "submission_project_quota_unknown_total",
    "Reads of a project's quotas the scheduler did not answer: the project's submissions are "
    "accepted unchecked until the next read.",
)
BATCHES = Counter(
    "jobs_submission_batches_total",
    "Batch submissions by outcome (accepted, replayed, conflict, invalid, forbidden, over_quota).",
    ["outcome"],
)
