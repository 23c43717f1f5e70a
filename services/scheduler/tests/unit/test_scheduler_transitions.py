import itertools

import pytest

from jobs_common.contracts import TERMINAL_STATUSES, JobStatus
from jobs_scheduler.domain.transitions import (
    ALLOWED,
    IllegalTransition,
    is_allowed,
    sources_of,
    transition,
)

pytestmark = pytest.mark.unit

LEGAL = {(current, target) for current, targets in ALLOWED.items() for target in targets}
EVERY_MOVE = list(itertools.product([None, *JobStatus], JobStatus))


@pytest.mark.parametrize(("current", "target"), sorted(LEGAL, key=str))
def test_legal_moves_are_applied(current: JobStatus | None, target: JobStatus) -> None:
    assert transition(current, target) is target


@pytest.mark.parametrize(("current", "target"), [m for m in EVERY_MOVE if m not in LEGAL], ids=str)
def test_every_illegal_move_is_refused(current: JobStatus | None, target: JobStatus) -> None:
    with pytest.raises(IllegalTransition):
        transition(current, target)


def test_terminal_states_except_dead_have_no_way_out() -> None:
    for status in TERMINAL_STATUSES - {JobStatus.DEAD}:
        assert ALLOWED[status] == frozenset()
    assert ALLOWED[JobStatus.DEAD] == {JobStatus.QUEUED, JobStatus.SCHEDULED}


def test_a_new_job_can_only_start_pending() -> None:
    assert [t for t in JobStatus if is_allowed(None, t)] == [JobStatus.PENDING]


def test_sources_of_matches_the_table() -> None:
    assert sources_of(JobStatus.RUNNING) == ("queued", "running")
    assert set(sources_of(JobStatus.SUCCEEDED)) == {"queued", "running"}
    for target in JobStatus:
        for source in sources_of(target):
            assert is_allowed(JobStatus(source), target)
