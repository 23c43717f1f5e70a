"""The job state machine: one pure table and one function that applies it.

Every change of a job's status goes through the status writer (``adapters/status.py``),
which checks each step with :func:`transition` before it writes anything, so nothing can move
a job along an edge that is not in :data:`ALLOWED`. :func:`sources_of` gives the statuses a
read may select rows in (e.g. the results that may still end their job).
"""

from __future__ import annotations

from typing import Final

from jobs_common.contracts import JobStatus as S
from jobs_common.errors import PlatformError


class IllegalTransition(PlatformError):
    code = "conflict"
    status_code = 409

    def __init__(self, current: S | None, target: S) -> None:
        super().__init__(f"illegal transition {current} -> {target}")
        self.current = current
        self.target = target


ALLOWED: Final[dict[S | None, frozenset[S]]] = {
    # None: the job does not exist yet (recording a submission).
    None: frozenset({S.PENDING}),
    S.PENDING: frozenset({S.QUEUED, S.SCHEDULED, S.BLOCKED, S.CANCELLED, S.DEAD}),
    S.BLOCKED: frozenset({S.PENDING, S.QUEUED, S.CANCELLED, S.DEAD}),
    S.SCHEDULED: frozenset({S.QUEUED, S.CANCELLED, S.DEAD}),
    # queued -> queued: re-dispatch of the same attempt after its message was lost or expired.
    # queued -> succeeded/failed: the result overtook the running message (separate queues).
    S.QUEUED: frozenset(
        {S.QUEUED, S.RUNNING, S.SUCCEEDED, S.FAILED, S.SCHEDULED, S.CANCELLED, S.DEAD}
    ),
    # running -> running: a redelivered attempt taken over by another worker.
    S.RUNNING: frozenset({S.RUNNING, S.SUCCEEDED, S.FAILED, S.CANCELLED, S.DEAD}),
    # failed is where a failed attempt waits while its retry is decided; a job whose
    # cancellation was asked meanwhile ends cancelled instead of being retried.
    S.FAILED: frozenset({S.SCHEDULED, S.QUEUED, S.DEAD, S.CANCELLED}),
    # A person may run a dead job again.
    S.DEAD: frozenset({S.QUEUED, S.SCHEDULED}),
    S.SUCCEEDED: frozenset(),
    S.CANCELLED: frozenset(),
}


def is_allowed(current: S | None, target: S) -> bool:
    return target in ALLOWED.get(current, frozenset())


def transition(current: S | None, target: S) -> S:
    """Return ``target`` when ``current -> target`` is legal, else raise IllegalTransition."""
    if not is_allowed(current, target):
        raise IllegalTransition(current, target)
    return target


def sources_of(target: S) -> tuple[str, ...]:
    """Every existing status from which ``target`` may be reached, for SQL guards."""
    return tuple(
        sorted(str(s) for s, targets in ALLOWED.items() if s is not None and target in targets)
    )
