"""A job's latest error, labelled by the attempt that met it and whether it is the job's
present state.

``jobs.last_error`` keeps the latest failure once a later attempt runs or succeeds: shown as
it is, a job that failed once and then succeeded would read as failing. The scheduler writes
it with the job's attempt number at that moment (a retry waits under the same number, a dead
job ends on it), so while the job is dead, failed or waiting for that retry, the error is
current and its attempt is the job's; afterwards it belongs to the latest attempt whose row
holds an error.
"""

from __future__ import annotations

from jobs_common.contracts import JobStatus
from jobs_dashboard.domain.models import AttemptError

ENDED_ON_ERROR = frozenset({JobStatus.FAILED, JobStatus.DEAD})


def latest_error(
    *,
    status: JobStatus,
    attempt: int,
    message: str | None,
    error_class: str | None,
    errored_attempt: int | None,
) -> AttemptError | None:
    """``errored_attempt``: the highest attempt whose row holds an error (None: no such row)."""
    if message is None and error_class is None:
        return None
    waiting_to_retry = status is JobStatus.SCHEDULED and errored_attempt == attempt
    current = status in ENDED_ON_ERROR or waiting_to_retry
    if current and attempt > 0:
        errored_attempt = attempt
    return AttemptError(
        attempt=errored_attempt, error_class=error_class, message=message, current=current
    )
