"""Intake makes sure a job's queue exists once per pair, store and ``ttl``
(``adapters/project_queues.KnownQueues``), not per transaction."""

from __future__ import annotations

import time
import uuid

import pytest

from jobs_scheduler.adapters.project_queues import KnownQueues

pytestmark = pytest.mark.unit

A, B = (uuid.uuid4(), "default"), (uuid.uuid4(), "reports")


def test_a_pair_is_ensured_once_per_store_until_its_ttl_or_a_delete() -> None:
    known = KnownQueues(ttl=0.2)
    assert known.unknown("db1", [A, B, A]) == sorted([A, B])
    known.seen("db1", [A, B])
    assert known.unknown("db1", [A, B]) == []
    assert known.unknown("db2", [A]) == [A]  # another job store (a test's own database)
    known.forget("db1", A)  # deleted on this replica: ensured again with its next job
    assert known.unknown("db1", [A, B]) == [A]
    time.sleep(0.25)
    assert known.unknown("db1", [B]) == [B]
