"""Prometheus metrics shared by every service (registered once, at import, like the services').

Each service's ``/metrics`` serves the default registry: a service that consumes through
:mod:`jobs_common.acks` or answers HTTP through :mod:`jobs_common.http_metrics` exports these
series next to its own. A name several services export is defined once, in ``jobs_common``
(the tests import every service into one process, where a name registers only once); the one
only the outbox relays export, ``outbox_pending``, is in :mod:`jobs_common.outbox_metrics`.
The catalogue of every name, its type, labels and exporter is in docs/operations.md.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

DELIVERIES_SETTLED = Counter(
    "jobs_deliveries_settled_total",
    "Deliveries settled by the ack policy, by queue and action "
    "(ack, requeue, poison, requeue_limit, settle_failed).",
    ["queue", "action"],
)
HTTP_REQUESTS = Counter(
    "http_requests_total",
    "HTTP requests answered, by route template (never the raw path), method and status code.",
    ["route", "method", "status"],
)
HTTP_REQUEST_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)

# Bounded label values for a job's priority (1..3): the ready queue's own word.
PRIORITY_LABELS = {1: "low", 2: "medium", 3: "high"}


def type_label(job_type: object) -> str:
    """Bounded label values: the built-in job types as is, everything else as ``other``."""
    from jobs_common.payloads import BUILTIN_JOB_TYPES

    return job_type if isinstance(job_type, str) and job_type in BUILTIN_JOB_TYPES else "other"


def priority_label(priority: object) -> str:
    """``low``, ``medium`` or ``high`` for a priority 1..3, ``other`` for anything else."""
    return PRIORITY_LABELS.get(priority, "other") if isinstance(priority, int) else "other"
