"""The claim rule (domain/claims.py): a redelivered copy runs only when no live worker can
still hold its attempt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobs_scheduler.domain.claims import MAX_RETRY, MIN_RETRY, claim_verdict, fresh_window

pytestmark = pytest.mark.unit

T0 = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=10)


def decide(**overrides: Any) -> Any:
    fields: dict[str, Any] = {
        "attempt": 1,
        "claimant": "w2",
        "claim_since": T0,
        "status": "queued",
        "current_attempt": 1,
        "holder": None,
        "lease_expires_at": None,
        "horizon": T0,
        "lease": LEASE,
    }
    fields.update(overrides)
    return claim_verdict(**fields)


@pytest.mark.parametrize(
    "overrides",
    [
        {"status": None, "current_attempt": None},
        {"current_attempt": 2},
        {"status": "succeeded"},
        {"status": "dead"},
        {"status": "cancelled"},
        {"status": "scheduled"},
    ],
)
def test_an_attempt_that_ended_or_moved_on_is_skipped(overrides: dict[str, Any]) -> None:
    assert decide(**overrides).verdict == "skip"


def test_an_attempt_nobody_reported_waits_a_lease_of_reading_then_starts() -> None:
    early = decide(horizon=T0 + timedelta(seconds=3))
    assert (early.verdict, early.write) == ("wait", None)
    assert early.retry_after == MAX_RETRY  # 7 s to go, asked again within 5
    nearly = decide(horizon=T0 + timedelta(seconds=9.9))
    assert nearly.verdict == "wait" and nearly.retry_after == MIN_RETRY
    assert decide(horizon=None).verdict == "wait"  # no live reader: nothing is proven
    due = decide(horizon=T0 + LEASE)
    assert (due.verdict, due.write) == ("run", "start")


def test_an_attempt_running_elsewhere_waits_while_its_lease_lives() -> None:
    running = {"status": "running", "holder": "w1", "horizon": T0 + timedelta(minutes=5)}
    live = decide(**running, lease_expires_at=T0 + timedelta(minutes=5, seconds=2))
    assert (live.verdict, live.write) == ("wait", None)
    assert live.retry_after == 2
    expired = decide(**running, lease_expires_at=T0 + timedelta(minutes=4))
    assert (expired.verdict, expired.write) == ("run", "take_over")
    unjudged = decide(**{**running, "horizon": None}, lease_expires_at=T0)
    assert unjudged.verdict == "wait"


def test_an_attempt_already_the_claimants_runs_again_without_a_write() -> None:
    mine = decide(status="running", holder="w2", lease_expires_at=T0 + LEASE)
    assert (mine.verdict, mine.write) == ("run", None)


def test_a_first_delivery_past_its_freshness_starts_at_once_unless_another_holds_it() -> None:
    """No copy of it runs unasked (copies are claimed), so it need not wait for anyone."""
    first = decide(claim_since=None, horizon=None)
    assert (first.verdict, first.write) == ("run", "start")
    taken = decide(
        claim_since=None,
        status="running",
        holder="w1",
        lease_expires_at=T0 + LEASE,
        horizon=T0,
    )
    assert taken.verdict == "wait"


@pytest.mark.parametrize(
    ("backlog", "seconds"),
    [
        (0, 5.0),  # behind nothing: FRESH_DISPATCH
        (-3, 5.0),
        (1_000, 15.0),  # 10 s to drain at 100 jobs/s
        (100_000, 55.0),  # at most MAX_FRESH, under the ready queues' 60 s TTL
    ],
)
def test_a_dispatch_behind_a_backlog_is_fresh_for_as_long_as_it_takes_to_drain(
    backlog: int, seconds: float
) -> None:
    window = fresh_window(backlog, drain_per_second=100)
    assert window == timedelta(seconds=seconds)
