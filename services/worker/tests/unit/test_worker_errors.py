"""Any exception becomes a JobError: typed failures keep their kind, the rest is retryable."""

from __future__ import annotations

import pytest

from jobs_common.contracts import ErrorKind
from jobs_worker.domain.errors import (
    MAX_ERROR_MESSAGE,
    JobTimedOut,
    PermanentJobError,
    RetryableJobError,
    classify,
)

pytestmark = pytest.mark.unit


def test_typed_failures_keep_kind_and_class() -> None:
    permanent = classify(PermanentJobError("bad input", error_class="InvalidThing"))
    assert (permanent.kind, permanent.error_class, permanent.message) == (
        ErrorKind.PERMANENT,
        "InvalidThing",
        "bad input",
    )
    retryable = classify(RetryableJobError("later"))
    assert (retryable.kind, retryable.error_class) == (ErrorKind.RETRYABLE, "RetryableJobError")
    assert classify(JobTimedOut("slow")).kind is ErrorKind.TIMEOUT


def test_unexpected_exceptions_are_retryable() -> None:
    error = classify(KeyError("missing"))
    assert (error.kind, error.error_class) == (ErrorKind.RETRYABLE, "KeyError")
    assert classify(RuntimeError()).message == "RuntimeError"


def test_long_messages_are_truncated() -> None:
    error = classify(ValueError("x" * 10_000))
    assert len(error.message) == MAX_ERROR_MESSAGE
