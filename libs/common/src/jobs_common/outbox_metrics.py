"""``outbox_pending{service}``: the one metric the submission service and the scheduler both
export (each relays an outbox of its own). Defined once here, imported only by those two, so
no other service's ``/metrics`` shows it."""

from __future__ import annotations

from prometheus_client import Gauge

OUTBOX_PENDING = Gauge(
    "outbox_pending",
    "Outbox entries accepted but not yet confirmed published, as this process's last relay "
    "pass saw them (service: submission = its MongoDB outbox, scheduler = its PostgreSQL "
    "outbox); bounded by the relay's limit (see docs/operations.md).",
    ["service"],
)
