"""Rate-limit rules: window arithmetic, Retry-After, and one replica's counting of a limit
shared by all replicas (a fake clock: plain numbers)."""

from __future__ import annotations

import pytest

from jobs_gateway.domain.rate_limit import (
    Limit,
    ReplicaWindowCounts,
    Scope,
    Window,
    retry_after,
)

pytestmark = pytest.mark.unit

MINUTE = Window(60)
T0 = 1_800_000_000.0  # a minute boundary (divisible by 60 and 3600)


@pytest.mark.parametrize(
    ("now", "start", "end", "wait"),
    [
        (T0, T0, T0 + 60, 60),
        (T0 + 0.2, T0, T0 + 60, 60),  # 59.8 s left: rounded up
        (T0 + 59.0, T0, T0 + 60, 1),
        (T0 + 59.999, T0, T0 + 60, 1),  # never 0
        (T0 + 60, T0 + 60, T0 + 120, 60),
        (T0 - 0.5, T0 - 60, T0, 1),
    ],
)
def test_minute_window(now: float, start: float, end: float, wait: int) -> None:
    assert (MINUTE.start(now), MINUTE.end(now), MINUTE.retry_after(now)) == (start, end, wait)


def test_hour_window_and_invalid_window() -> None:
    hour = Window(3600)
    assert (hour.start(T0 + 1800.5), hour.retry_after(T0 + 1800.5)) == (T0, 1800)
    with pytest.raises(ValueError, match="at least one second"):
        Window(0)


def test_a_limit_allows_max_hits_and_refuses_the_next() -> None:
    limit = Limit(Scope.LOGIN_ACCOUNT, 3, MINUTE)
    assert [limit.exceeded(hits) for hits in (1, 2, 3, 4, 50)] == [False, False, False, True, True]


def test_retry_after_is_none_within_limits_else_the_longest_wait() -> None:
    per_minute = Limit(Scope.LOGIN_ACCOUNT, 2, MINUTE)
    per_hour = Limit(Scope.REGISTER_ADDRESS, 2, Window(3600))
    now = T0 + 30
    assert retry_after([(per_minute, 2), (per_hour, 1)], now=now) is None
    assert retry_after([(per_minute, 3), (per_hour, 1)], now=now) == 30
    assert retry_after([(per_minute, 3), (per_hour, 3)], now=now) == 3570
    assert retry_after([], now=now) is None


def test_one_replica_alone_refuses_past_the_limit_until_the_window_ends() -> None:
    counts = ReplicaWindowCounts(max_hits=3, window=MINUTE)
    assert [counts.hit("u1", now=T0 + 10) for _ in range(4)] == [None, None, None, 50]
    assert counts.hit("u2", now=T0 + 10) is None  # users are independent
    assert counts.hit("u1", now=T0 + 59.5) == 1
    assert counts.hit("u1", now=T0 + 60) is None  # a new window


def test_shared_counts_learned_from_a_flush_refuse_a_user_over_the_limit() -> None:
    counts = ReplicaWindowCounts(max_hits=5, window=MINUTE)
    assert counts.hit("u1", now=T0 + 1) is None
    assert counts.hit("u1", now=T0 + 1) is None
    deltas = counts.drain(now=T0 + 1.5)
    assert deltas is not None
    assert (deltas.window_start, deltas.window_end, dict(deltas.hits)) == (T0, T0 + 60, {"u1": 2})
    assert counts.drain(now=T0 + 1.5) is None  # handed over once
    # Meanwhile other replicas served u1 four times: the store answers 2 + 4.
    counts.learn(deltas.window_start, {"u1": 6})
    assert counts.shared("u1") == 6
    assert counts.hit("u1", now=T0 + 2) == 58


def test_hits_after_a_drain_count_on_top_of_the_shared_count() -> None:
    counts = ReplicaWindowCounts(max_hits=5, window=MINUTE)
    counts.hit("u1", now=T0)
    deltas = counts.drain(now=T0)
    assert deltas is not None
    counts.hit("u1", now=T0 + 1)  # while the flush is under way
    counts.learn(deltas.window_start, {"u1": 3})  # 1 of ours + 2 of other replicas
    # served so far: 3 shared + 1 pending; the 5th is allowed, the 6th is not
    assert counts.hit("u1", now=T0 + 2) is None
    assert counts.hit("u1", now=T0 + 2) == 58


def test_a_failed_flush_gives_its_hits_back() -> None:
    counts = ReplicaWindowCounts(max_hits=10, window=MINUTE)
    counts.hit("u1", now=T0)
    counts.hit("u1", now=T0)
    deltas = counts.drain(now=T0)
    assert deltas is not None
    counts.hit("u1", now=T0 + 1)
    counts.restore(deltas)
    again = counts.drain(now=T0 + 2)
    assert again is not None and dict(again.hits) == {"u1": 3}


def test_counts_of_an_ended_window_are_dropped() -> None:
    counts = ReplicaWindowCounts(max_hits=2, window=MINUTE)
    counts.hit("u1", now=T0)
    old = counts.drain(now=T0)
    assert old is not None
    counts.hit("u1", now=T0 + 61)
    counts.learn(old.window_start, {"u1": 99})  # late answer for the previous minute
    assert counts.shared("u1") == 0
    counts.restore(old)  # nor are its hits given back
    assert len(counts) == 1
    fresh = counts.drain(now=T0 + 62)
    assert fresh is not None
    assert (fresh.window_start, dict(fresh.hits)) == (T0 + 60, {"u1": 1})


def test_max_hits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        ReplicaWindowCounts(max_hits=0, window=MINUTE)
