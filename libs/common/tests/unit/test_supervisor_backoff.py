"""The restart backoff of ``make dev``'s supervisor: 0.5 s doubling up to 30 s."""

from __future__ import annotations

import pytest

from jobs_testing.supervisor import Backoff, describe_exit, stop_rank

pytestmark = pytest.mark.unit


def test_backoff_doubles_up_to_the_cap() -> None:
    backoff = Backoff()
    assert [backoff.delay(n) for n in range(1, 10)] == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]
    assert backoff.reset_after == 60


def test_exits_are_described_by_code_or_signal() -> None:
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-9) == "signal SIGKILL"


def test_gateway_stops_first_then_workers_then_the_rest() -> None:
    names = ["scheduler", "scheduler-2", "submission", "dashboard", "gateway", "worker-1"]
    assert sorted(names, key=stop_rank)[:2] == ["gateway", "worker-1"]
