"""The cancelled set: exact attempts and whole jobs, bounded, expiring."""

from __future__ import annotations

import uuid

import pytest

from jobs_worker.domain.cancellations import CancelledSet

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_attempt_or_every_attempt_of_a_job() -> None:
    cancelled = CancelledSet(clock=Clock())
    one, whole = uuid.uuid4(), uuid.uuid4()
    cancelled.add(one, 2, "lease lost")
    cancelled.add(whole, None, "cancelled")
    assert cancelled.reason_for(one, 2) == "lease lost"
    assert cancelled.reason_for(one, 1) is None
    assert cancelled.reason_for(one, 3) is None
    assert cancelled.reason_for(whole, 1) == "cancelled"
    assert cancelled.reason_for(whole, 7) == "cancelled"
    assert cancelled.reason_for(uuid.uuid4(), 1) is None
    assert len(cancelled) == 2


def test_the_exact_attempt_wins_over_the_job_entry() -> None:
    cancelled = CancelledSet(clock=Clock())
    job = uuid.uuid4()
    cancelled.add(job, None, "cancelled")
    cancelled.add(job, 1, "lease lost")
    assert cancelled.reason_for(job, 1) == "lease lost"
    assert cancelled.reason_for(job, 2) == "cancelled"


def test_bounded_evicts_the_oldest_first() -> None:
    clock = Clock()
    cancelled = CancelledSet(capacity=3, clock=clock)
    jobs = [uuid.uuid4() for _ in range(4)]
    for job in jobs[:3]:
        cancelled.add(job, 1, "cancelled")
        clock.now += 1
    cancelled.add(jobs[0], 1, "again")  # re-adding refreshes: now the newest
    clock.now += 1
    cancelled.add(jobs[3], 1, "cancelled")
    assert len(cancelled) == 3
    assert cancelled.reason_for(jobs[1], 1) is None  # the oldest went
    assert cancelled.reason_for(jobs[0], 1) == "again"
    assert cancelled.reason_for(jobs[2], 1) == "cancelled"
    assert cancelled.reason_for(jobs[3], 1) == "cancelled"


def test_entries_expire_after_the_ttl() -> None:
    clock = Clock()
    cancelled = CancelledSet(ttl=60, clock=clock)
    old, new = uuid.uuid4(), uuid.uuid4()
    cancelled.add(old, None, "cancelled")
    clock.now += 30
    cancelled.add(new, None, "cancelled")
    clock.now += 29.9
    assert cancelled.reason_for(old, 1) == "cancelled"
    clock.now += 0.2  # old is 60.1 s old, new 30.1 s
    assert cancelled.reason_for(old, 1) is None
    assert cancelled.reason_for(new, 1) == "cancelled"
    assert len(cancelled) == 1
    clock.now += 31
    assert len(cancelled) == 0


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        CancelledSet(capacity=0)
