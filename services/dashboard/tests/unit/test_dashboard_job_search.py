"""The jobs list's search text and a job's latest error by attempt (no I/O)."""

import uuid

import pytest

from jobs_common.contracts import JobStatus
from jobs_common.errors import ValidationFailed
from jobs_dashboard.domain.id_prefix import IdPrefix
from jobs_dashboard.domain.job_errors import latest_error
from jobs_dashboard.domain.search import PayloadMatch, parse_search

pytestmark = pytest.mark.unit


def refused(text: str) -> str:
    with pytest.raises(ValidationFailed) as caught:
        parse_search(text)
    assert caught.value.status_code == 422
    assert [d.field for d in caught.value.details] == ["search"]
    return caught.value.details[0].message


def test_no_search_for_empty_text() -> None:
    assert parse_search(None) is None
    assert parse_search("   ") is None


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("3F2A9C1B", "3f2a9c1b"),
        (" 3f2a9c1b-77 ", "3f2a9c1b77"),
        ("3f2a9c1b-77aa-4bcd-8eef-0123456789ab", "3f2a9c1b77aa4bcd8eef0123456789ab"),
        ("3f2a9c1b77aa4bcd", "3f2a9c1b77aa4bcd"),
    ],
)
def test_an_id_prefix_with_or_without_the_uuid_dashes(text: str, digits: str) -> None:
    assert parse_search(text) == IdPrefix(digits)


def test_an_id_prefix_spans_every_uuid_starting_with_it() -> None:
    prefix = IdPrefix("3f2a9c1b")
    assert prefix.lowest == uuid.UUID("3f2a9c1b-0000-0000-0000-000000000000")
    assert prefix.highest == uuid.UUID("3f2a9c1b-ffff-ffff-ffff-ffffffffffff")
    inside = uuid.UUID("3f2a9c1b-1234-4000-8000-000000000000")
    assert prefix.lowest <= inside <= prefix.highest
    # uuids order as their hex text, as PostgreSQL's uuid b-tree does
    assert str(prefix.lowest) < str(inside) < str(prefix.highest)


@pytest.mark.parametrize("text", ["3f2a9c1", "3f2a-9c1b", "zz2a9c1b", "3f2a9c1b-77aa4", "hello"])
def test_what_is_no_id_prefix_is_refused_with_the_two_forms_named(text: str) -> None:
    message = refused(text)
    assert "8 or more hex digits" in message
    assert "payload.<field> = <value>" in message


def test_a_uuid_too_long_is_refused() -> None:
    refused("3f2a9c1b-77aa-4bcd-8eef-0123456789ab0")
    refused("3f2a9c1b77aa4bcd8eef0123456789ab0")


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("payload.to = a@b.c", ("a@b.c",)),
        ("payload.to=a b c", ("a b c",)),
        ('payload.orderId = "42"', ("42",)),
        ("payload.orderId = 42", (42, "42")),
        ("payload.rate=0.5", (0.5, "0.5")),
        ("payload.urgent = true", (True, "true")),
        ("payload.seed = null", (None, "null")),
        ("payload.n = 1e999", ("1e999",)),
        ("payload.tags = [1]", ("[1]",)),
    ],
)
def test_a_payload_value_matches_each_reading_of_its_text(
    text: str, values: tuple[object, ...]
) -> None:
    field = text.split(".", 1)[1].split("=", 1)[0].strip()
    assert parse_search(text) == PayloadMatch(field, values)


def test_a_payload_match_is_one_containment_document_per_reading() -> None:
    match = parse_search("payload.orderId = 42")
    assert isinstance(match, PayloadMatch)
    assert match.documents() == [{"orderId": 42}, {"orderId": "42"}]


def test_payload_searches_that_cannot_be_answered_are_refused() -> None:
    assert "top-level" in refused("payload.customer.id = 7")
    assert "give a value" in refused("payload.to =")
    assert "JSON string" in refused('payload.to = "unterminated')
    assert "payload.<field> = <value>" in refused("payload to = x")
    assert "at most" in refused("payload.x = " + "y" * 1_000)


def error(
    status: JobStatus, attempt: int, errored: int | None, message: str | None = "boom"
) -> dict[str, object] | None:
    found = latest_error(
        status=status,
        attempt=attempt,
        message=message,
        error_class=None if message is None else "SimulatedFailure",
        errored_attempt=errored,
    )
    return None if found is None else {"attempt": found.attempt, "current": found.current}


def test_an_error_a_later_attempt_overcame_is_an_earlier_attempts() -> None:
    assert error(JobStatus.SUCCEEDED, 2, 1) == {"attempt": 1, "current": False}
    assert error(JobStatus.RUNNING, 3, 2) == {"attempt": 2, "current": False}
    assert error(JobStatus.QUEUED, 2, 1) == {"attempt": 1, "current": False}
    assert error(JobStatus.CANCELLED, 2, 1) == {"attempt": 1, "current": False}


def test_an_error_the_job_ended_on_or_waits_to_retry_after_is_current() -> None:
    assert error(JobStatus.DEAD, 3, 3) == {"attempt": 3, "current": True}
    assert error(JobStatus.SCHEDULED, 1, 1) == {"attempt": 1, "current": True}
    # dead without an attempt of its own (a parent failed): no attempt to name
    assert error(JobStatus.DEAD, 0, None) == {"attempt": None, "current": True}
    # dead by the broker after attempt 2 failed: the job's own attempt, not the errored row's
    assert error(JobStatus.DEAD, 3, 2) == {"attempt": 3, "current": True}


def test_no_error_no_label() -> None:
    assert error(JobStatus.SUCCEEDED, 1, None, message=None) is None
