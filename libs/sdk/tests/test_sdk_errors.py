"""Any exception becomes a JobError: typed failures keep their kind, the rest is retryable."""

from __future__ import annotations

import pytest

from jobs_sdk.errors import (
    MAX_ERROR_MESSAGE,
    JobTimedOut,
    PermanentJobError,
    RetryableJobError,
    classify,
    describe,
    strip_paths,
)

pytestmark = pytest.mark.unit


def test_typed_failures_keep_kind_and_class() -> None:
    permanent = classify(PermanentJobError("bad input", error_class="InvalidThing"))
    assert (permanent.kind, permanent.error_class, permanent.message) == (
        "permanent",
        "InvalidThing",
        "bad input",
    )
    retryable = classify(RetryableJobError("later"))
    assert (retryable.kind, retryable.error_class) == ("retryable", "RetryableJobError")
    assert classify(JobTimedOut("slow")).kind == "timeout"


def test_unexpected_exceptions_are_retryable() -> None:
    error = classify(KeyError("missing"))
    assert (error.kind, error.error_class) == ("retryable", "KeyError")
    assert classify(RuntimeError()).message == "RuntimeError"


def test_long_messages_are_truncated() -> None:
    error = classify(ValueError("x" * 10_000))
    assert len(error.message) == MAX_ERROR_MESSAGE


def test_recorded_errors_carry_no_server_paths() -> None:
    missing = FileNotFoundError(2, "No such file or directory", "/srv/app/var/artifacts/j/1.png")
    error = classify(missing)
    assert error.error_class == "FileNotFoundError"
    assert error.message == "[Errno 2] No such file or directory: '…/1.png'"
    typed = classify(PermanentJobError("cannot read /home/jobs/.cache/x.bin", error_class="Io"))
    assert typed.message == "cannot read …/x.bin"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('File "/usr/lib/python3.12/json/decoder.py", line 3', 'File "…/decoder.py", line 3'),
        ("under /var/lib/x/ and /tmp/a", "under …/x and …/a"),
        (r"C:\Users\bob\out.png missing", "…/out.png missing"),
        # Not filesystem paths: URLs, fractions, dates, words with a slash, one component.
        (
            "see https://errors.pydantic.dev/2.9/v/missing",
            "see https://errors.pydantic.dev/2.9/v/missing",
        ),
        ("1/2 of 2025/01/31, and/or /tmp", "1/2 of 2025/01/31, and/or /tmp"),
    ],
)
def test_strip_paths(text: str, expected: str) -> None:
    assert strip_paths(text) == expected


def test_describe_names_class_and_message() -> None:
    assert describe(ValueError("bad /etc/app/secret.conf")) == "ValueError: bad …/secret.conf"
    assert describe(RuntimeError()) == "RuntimeError"
    assert describe(PermanentJobError("no", error_class="Refused")) == "Refused: no"
