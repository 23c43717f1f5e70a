"""Intake makes sure a job's queue exists once per pair, store and ``ttl``
(``adapters/project_queues.KnownQueues``), not per transaction."""

from __future__ import annotations

import time
import uuid

import pytest

from jobs_common.contracts import JobSubmitted, utcnow
from jobs_scheduler.adapters.project_queues import NO_DEFAULTS, KnownQueues
from jobs_scheduler.domain.submissions import QueueDefaults, with_queue_defaults

pytestmark = pytest.mark.unit

A, B = (uuid.uuid4(), "default"), (uuid.uuid4(), "reports")


def test_a_pair_is_ensured_once_per_store_until_its_ttl_or_a_delete() -> None:
    known = KnownQueues(ttl=0.2)
    assert known.unknown("db1", [A, B, A]) == sorted([A, B])
    known.seen("db1", {A: QueueDefaults(timeout_seconds=60), B: NO_DEFAULTS})
    assert known.unknown("db1", [A, B]) == []
    assert known.defaults("db1", A) == QueueDefaults(timeout_seconds=60)
    assert known.unknown("db2", [A]) == [A]  # another job store (a test's own database)
    known.forget("db1", A)  # deleted on this replica: ensured again with its next job
    assert known.unknown("db1", [A, B]) == [A]
    time.sleep(0.25)
    assert known.unknown("db1", [B]) == [B]


def test_a_queue_s_defaults_fill_only_what_a_job_names_not() -> None:
    def job(**given: object) -> JobSubmitted:
        fields: dict[str, object] = {
            "job_id": uuid.uuid4(),
            "job_type": "simulate",
            "priority": 2,
            "payload": {},
            "submitted_by": "user@test.com",
            "max_attempts": 3,
            "submitted_at": utcnow(),
        }
        return JobSubmitted(**(fields | given))

    defaults = QueueDefaults(timeout_seconds=60, retry_policy="gentle")
    filled = with_queue_defaults(job(), defaults)
    assert (filled.timeout_seconds, filled.retry_policy_name) == (60, "gentle")
    own = with_queue_defaults(job(timeout_seconds=5, retry_policy_name="mine"), defaults)
    assert (own.timeout_seconds, own.retry_policy_name) == (5, "mine")
    untouched = job()
    assert with_queue_defaults(untouched, NO_DEFAULTS) is untouched
    # The priority: only of a job that named none, and only where the queue has one.
    urgent = QueueDefaults(priority=3)
    assert with_queue_defaults(job(priority_default=True), urgent).priority == 3
    assert with_queue_defaults(job(priority=1), urgent).priority == 1
    assert with_queue_defaults(job(priority_default=True), NO_DEFAULTS).priority == 2
    # The timeout its type declared (the submission filled it in) gives way to the queue's.
    typed = job(timeout_seconds=300, timeout_default=True)
    assert with_queue_defaults(typed, defaults).timeout_seconds == 60
    assert with_queue_defaults(typed, NO_DEFAULTS).timeout_seconds == 300
