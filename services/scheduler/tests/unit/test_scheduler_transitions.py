"""The job state machine against a table written out by hand: every move not listed here
must be refused."""

import itertools

import pytest

from jobs_common.contracts import JobStatus
from jobs_scheduler.domain.transitions import IllegalTransition, is_allowed, sources_of, transition

pytestmark = pytest.mark.unit

S = JobStatus

# Every legal move, "from -> to" ("none": the job does not exist yet).
EXPECTED_LEGAL = {
    "none -> pending",
    "pending -> queued",
    "pending -> scheduled",
    "pending -> blocked",
    "pending -> cancelled",
    "pending -> dead",
    "blocked -> pending",
    "blocked -> queued",
    "blocked -> cancelled",
    "blocked -> dead",
    "scheduled -> queued",
    "scheduled -> cancelled",
    "scheduled -> dead",
    "queued -> queued",
    "queued -> running",
    "queued -> succeeded",
    "queued -> failed",
    "queued -> scheduled",
    "queued -> cancelled",
    "queued -> dead",
    "running -> running",
    "running -> succeeded",
    "running -> failed",
    "running -> cancelled",
    "running -> dead",
    "failed -> scheduled",
    "failed -> queued",
    "failed -> dead",
    "failed -> cancelled",
    "dead -> queued",
    "dead -> scheduled",
}
EVERY_MOVE = list(itertools.product([None, *S], S))


def name(current: JobStatus | None, target: JobStatus) -> str:
    return f"{current or 'none'} -> {target}"


def test_the_table_has_31_legal_moves_of_90() -> None:
    assert len(EVERY_MOVE) == 90  # from none or 9 statuses, to 9 statuses
    assert sum(is_allowed(c, t) for c, t in EVERY_MOVE) == len(EXPECTED_LEGAL) == 31


@pytest.mark.parametrize(("current", "target"), EVERY_MOVE, ids=str)
def test_every_move_is_applied_or_refused_as_listed(
    current: JobStatus | None, target: JobStatus
) -> None:
    if name(current, target) in EXPECTED_LEGAL:
        assert transition(current, target) is target
    else:
        with pytest.raises(IllegalTransition):
            transition(current, target)


def test_succeeded_and_cancelled_have_no_way_out() -> None:
    assert [t for t in S if is_allowed(S.SUCCEEDED, t)] == []
    assert [t for t in S if is_allowed(S.CANCELLED, t)] == []


@pytest.mark.parametrize(
    ("target", "sources"),
    [
        (S.PENDING, ("blocked",)),
        (S.BLOCKED, ("pending",)),
        (S.SCHEDULED, ("dead", "failed", "pending", "queued")),
        (S.QUEUED, ("blocked", "dead", "failed", "pending", "queued", "scheduled")),
        (S.RUNNING, ("queued", "running")),
        (S.FAILED, ("queued", "running")),
        (S.SUCCEEDED, ("queued", "running")),
        (S.DEAD, ("blocked", "failed", "pending", "queued", "running", "scheduled")),
        (S.CANCELLED, ("blocked", "failed", "pending", "queued", "running", "scheduled")),
    ],
)
def test_sources_of(target: JobStatus, sources: tuple[str, ...]) -> None:
    assert sources_of(target) == sources
