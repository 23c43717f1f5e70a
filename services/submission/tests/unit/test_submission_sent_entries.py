"""When confirmed publishes are due to be marked sent, and the setting that bounds it."""

from __future__ import annotations

from typing import cast

import pytest
from pydantic import ValidationError

from jobs_submission.adapters.mongo import SubmissionStore
from jobs_submission.app.mark_sent import SentEntries
from jobs_submission.settings import Settings

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def entries(clock: Clock, *, interval: float = 0.1, max_pending: int = 3) -> SentEntries:
    # mark() is not called here: no store is needed
    return SentEntries(
        cast(SubmissionStore, None), interval=interval, max_pending=max_pending, monotonic=clock
    )


def test_nothing_is_due_while_nothing_waits() -> None:
    assert entries(Clock()).seconds_until_due() is None


def test_due_an_interval_after_the_oldest_entry() -> None:
    clock = Clock()
    sent = entries(clock)
    sent.add([{"_id": "a"}], token="t1")
    clock.now += 0.04
    sent.add([{"_id": "b"}], token="t2")  # a later entry does not push the deadline
    assert sent.seconds_until_due() == pytest.approx(0.06)
    clock.now += 0.07
    assert sent.seconds_until_due() == 0.0


def test_due_at_once_when_max_pending_wait() -> None:
    sent = entries(Clock(), max_pending=3)
    sent.add([{"_id": "a"}, {"_id": "b"}], token="t")
    assert sent.seconds_until_due() == pytest.approx(0.1)
    sent.add([{"_id": "c"}], token="t")
    assert len(sent) == 3
    assert sent.seconds_until_due() == 0.0


def test_an_empty_confirm_queues_nothing() -> None:
    sent = entries(Clock())
    sent.add([], token="t")
    assert len(sent) == 0 and sent.seconds_until_due() is None


def test_the_settle_interval_must_stay_well_inside_the_claim_lease() -> None:
    with pytest.raises(ValidationError, match="RELAY_SETTLE_INTERVAL_SECONDS"):
        Settings(relay_claim_lease_seconds=1.0, relay_settle_interval_seconds=0.6)
    Settings(relay_claim_lease_seconds=1.0, relay_settle_interval_seconds=0.5)
