"""Which finished job may go, from the design (docs/operations.md, "Retention"): past its
status's retention (succeeded and cancelled 7 days, dead 30), unless its dead letter is open,
its batch or a dependant still needs it, or it is its schedule's latest job; a zero retention
keeps a status forever; jobs that have not finished never go."""

from datetime import UTC, datetime, timedelta

import pytest

from jobs_common.contracts import JobStatus
from jobs_scheduler.domain.retention import FinishedJob, Retention, is_due, may_go

pytestmark = pytest.mark.unit

S = JobStatus
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
CUTOFFS = Retention().cutoffs(NOW)


def finished(status: JobStatus, days_ago: float | None, **facts: bool) -> FinishedJob:
    at = None if days_ago is None else NOW - days_ago * DAY
    return FinishedJob(status=status, finished_at=at, **facts)


@pytest.mark.parametrize(
    ("job", "goes"),
    [
        (finished(S.SUCCEEDED, 7.01), True),
        (finished(S.SUCCEEDED, 6.99), False),
        (finished(S.CANCELLED, 8), True),
        (finished(S.CANCELLED, 1), False),
        (finished(S.DEAD, 29), False),
        (finished(S.DEAD, 31), True),
        (finished(S.DEAD, 31, open_dead_letter=True), False),
        (finished(S.SUCCEEDED, 8, batch_members_due=False), False),
        (finished(S.SUCCEEDED, 8, dependants_due=False), False),
        (finished(S.SUCCEEDED, 8, latest_of_schedule=True), False),
        *((finished(status, None), False) for status in (S.QUEUED, S.RUNNING, S.BLOCKED)),
        (finished(S.FAILED, 100), False),  # not a final status: a retry is on its way
    ],
)
def test_which_finished_job_may_go(job: FinishedJob, goes: bool) -> None:
    assert may_go(job, CUTOFFS) is goes


def test_a_job_kept_for_others_is_still_due_itself() -> None:
    """A batch member or a parent kept for another job counts as due for that other's rule."""
    kept_parent = finished(S.SUCCEEDED, 8, dependants_due=False)
    assert is_due(kept_parent, CUTOFFS) and not may_go(kept_parent, CUTOFFS)


@pytest.mark.parametrize("status", [S.SUCCEEDED, S.CANCELLED, S.DEAD])
def test_a_zero_retention_keeps_a_status_forever(status: JobStatus) -> None:
    forever = Retention(**{status.value: timedelta(0)})
    assert status not in forever.cutoffs(NOW)
    assert not may_go(finished(status, 10_000), forever.cutoffs(NOW))


def test_the_defaults_are_a_week_and_a_month() -> None:
    assert Retention().by_status() == {
        S.SUCCEEDED: 7 * DAY,
        S.CANCELLED: 7 * DAY,
        S.DEAD: 30 * DAY,
    }
