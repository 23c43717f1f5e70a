"""Prometheus metrics shared by every service (registered once, at import, like the services').

Each service's ``/metrics`` serves the default registry, so a service that consumes through
:mod:`jobs_common.acks` exports these series next to its own.
"""

from __future__ import annotations

from prometheus_client import Counter

DELIVERIES_SETTLED = Counter(
    "jobs_deliveries_settled_total",
    "Deliveries settled by the ack policy, by queue and action "
    "(ack, requeue, poison, requeue_limit, settle_failed).",
    ["queue", "action"],
)
