"""Analytics arithmetic and the retry rule (no I/O)."""

import pytest

from jobs_common.contracts import JobStatus
from jobs_common.errors import Conflict
from jobs_dashboard.domain.analytics import priority_counts, status_counts, success_rate
from jobs_dashboard.domain.commands import ensure_retryable

pytestmark = pytest.mark.unit


def test_status_counts_have_every_status() -> None:
    counts = status_counts({"dead": 2, "queued": 1})
    assert list(counts) == [s.value for s in JobStatus]
    assert counts["dead"] == 2
    assert counts["queued"] == 1
    assert counts["pending"] == 0


def test_priority_counts_have_every_priority() -> None:
    assert priority_counts({"2": 4}) == {"1": 0, "2": 4, "3": 0}


@pytest.mark.parametrize(
    ("counts", "rate"),
    [
        ({}, None),
        ({"running": 3}, None),
        ({"succeeded": 3}, 1.0),
        ({"dead": 2}, 0.0),
        ({"succeeded": 3, "dead": 1, "cancelled": 5}, 0.75),
    ],
)
def test_success_rate(counts: dict[str, int], rate: float | None) -> None:
    assert success_rate(counts) == rate


def test_only_dead_jobs_are_retryable() -> None:
    ensure_retryable("dead")
    for status in JobStatus:
        if status is JobStatus.DEAD:
            continue
        with pytest.raises(Conflict) as caught:
            ensure_retryable(status.value)
        assert caught.value.status_code == 409
        assert status.value in caught.value.message
