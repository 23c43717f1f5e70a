"""The arithmetic of the queue gauges: completion rates over a window, time to drain, age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs_dashboard.domain.queue_gauges import CompletionRates, oldest_age_seconds, time_to_drain

pytestmark = pytest.mark.unit


def test_no_rate_before_a_sample_covers_some_time() -> None:
    rates = CompletionRates(window=60)
    assert rates.per_second(3) is None
    rates.add(10.0, 10.0, {3: 5})
    assert rates.per_second(3) is None


def test_rate_is_the_completions_in_the_window_over_its_span() -> None:
    rates = CompletionRates(window=60)
    rates.add(0.0, 5.0, {3: 10, 1: 1})
    rates.add(5.0, 10.0, {3: 20})
    assert rates.per_second(3) == 3.0  # 30 over 10 s
    assert rates.per_second(1) == 0.1
    assert rates.per_second(2) == 0.0


def test_samples_older_than_the_window_are_dropped_but_the_latest_stays() -> None:
    rates = CompletionRates(window=10)
    rates.add(0.0, 5.0, {2: 100})
    rates.add(5.0, 10.0, {2: 100})
    rates.add(10.0, 18.0, {2: 10})  # the first ended over 10 s before this one: out
    assert rates.per_second(2) == 110 / 13
    rates.add(20.0, 100.0, {2: 8})  # a long gap: only the latest is left
    assert rates.per_second(2) == 0.1


@pytest.mark.parametrize(
    ("depth", "rate", "expected"),
    [
        (None, 2.0, None),  # the broker did not answer
        (0, None, 0.0),  # an empty queue is drained, whatever the rate
        (0, 0.0, 0.0),
        (10, None, None),  # nothing completed lately: no estimate
        (10, 0.0, None),
        (10, 2.0, 5.0),
        (3, 0.5, 6.0),
    ],
)
def test_time_to_drain(depth: int | None, rate: float | None, expected: float | None) -> None:
    assert time_to_drain(depth, rate) == expected


def test_oldest_age() -> None:
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert oldest_age_seconds(now, None) == 0.0
    assert oldest_age_seconds(now, now - timedelta(minutes=2)) == 120.0
    assert oldest_age_seconds(now, now + timedelta(seconds=1)) == 0.0  # clock skew: not negative
