"""Dead-letter commands' rules, from the design: a requeue needs an open letter of a job that
is still dead; a resolved letter stays resolved; a bulk requeue runs at most ``rate`` per
second, the oldest first."""

from datetime import UTC, datetime, timedelta

import pytest

from jobs_common.contracts import JobStatus
from jobs_common.errors import Conflict
from jobs_scheduler.domain.dead_letters import (
    ensure_open,
    ensure_requeueable,
    is_requeueable,
    requeue_not_before,
)

pytestmark = pytest.mark.unit

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("index", "rate", "after"),
    [
        (0, 20, timedelta(0)),
        (1, 20, timedelta(milliseconds=50)),
        (19, 20, timedelta(milliseconds=950)),
        (10_000, 20, timedelta(seconds=500)),
        (3, 0.5, timedelta(seconds=6)),
    ],
)
def test_requeues_are_spaced_by_the_rate(index: int, rate: float, after: timedelta) -> None:
    assert requeue_not_before(NOW, index, rate) == NOW + after


def test_never_more_than_rate_requeues_fall_due_within_one_second() -> None:
    times = [requeue_not_before(NOW, i, 20) for i in range(100)]
    assert sum(1 for t in times if t < NOW + timedelta(seconds=1)) == 20


@pytest.mark.parametrize(("index", "rate"), [(-1, 20), (1, 0), (1, -2)])
def test_a_pace_needs_a_0_based_index_and_a_positive_rate(index: int, rate: float) -> None:
    with pytest.raises(ValueError):
        requeue_not_before(NOW, index, rate)


@pytest.mark.parametrize("status", [s.value for s in JobStatus])
@pytest.mark.parametrize(
    ("resolved_at", "resolution"), [(None, None), (NOW, "discarded"), (NOW, "requeued")]
)
def test_requeue_needs_an_open_letter_of_a_dead_job(
    status: str, resolved_at: datetime | None, resolution: str | None
) -> None:
    allowed = resolved_at is None and status == "dead"
    assert is_requeueable(resolved_at, status) is allowed
    if allowed:
        ensure_requeueable(resolved_at, resolution, status)
        return
    with pytest.raises(Conflict) as refused:
        ensure_requeueable(resolved_at, resolution, status)
    assert (resolution or status) in refused.value.message


@pytest.mark.parametrize("resolution", ["discarded", "requeued"])
def test_a_resolved_letter_cannot_be_discarded_again(resolution: str) -> None:
    ensure_open(None, None)
    with pytest.raises(Conflict, match=resolution):
        ensure_open(NOW, resolution)
