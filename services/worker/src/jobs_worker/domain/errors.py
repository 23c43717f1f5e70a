"""A failed attempt as the worker reports it: the SDK's ``AttemptError`` (``jobs_sdk.errors``
classifies what a handler raised) as the ``JobResult`` contract's ``JobError``."""

from __future__ import annotations

from jobs_common.contracts import ErrorKind, JobError
from jobs_sdk.errors import AttemptError


def job_error(error: AttemptError) -> JobError:
    return JobError(
        kind=ErrorKind(error.kind),
        error_class=error.error_class,
        message=error.message,
        retry_after_seconds=error.retry_after_seconds,
    )
