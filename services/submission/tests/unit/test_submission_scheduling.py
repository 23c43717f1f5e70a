"""Validation of runAt / delaySeconds / retryPolicy / dependsOn and their message mapping."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest

from jobs_common.auth import Identity
from jobs_common.contracts import RetryPolicySpec
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_submission.domain.documents import job_submitted, new_document, public_view
from jobs_submission.domain.requests import (
    JobRequest,
    resolve_owner,
    unknown_parents,
)
from jobs_submission.domain.requests import (
    validate_job as validate_job_in,
)

from .conftest import BUILTINS

pytestmark = pytest.mark.unit

validate_job = partial(validate_job_in, catalog=BUILTINS)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
USER = Identity(user_id="u1", email="user@test.com", role="user")
PARENT = "7d8f5f8e-7a5e-4a8e-9d5e-0c2f3b1a9e11"


def body(**extra: Any) -> dict[str, Any]:
    return {
        "type": "email",
        "priority": 2,
        "payload": {"to": "someone@example.com", "subject": "hi", "body": "hello"},
        **extra,
    }


def errors(data: object) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_job(data, now=NOW)
    return {d.field: d.message for d in caught.value.details}


def request(**extra: Any) -> JobRequest:
    return resolve_owner(validate_job(body(**extra), now=NOW), USER)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-06-02T09:30:00Z", datetime(2026, 6, 2, 9, 30, tzinfo=UTC)),
        ("2026-06-02T11:30:00+02:00", datetime(2026, 6, 2, 9, 30, tzinfo=UTC)),
        ("2026-06-02T04:30:00.250-05:00", datetime(2026, 6, 2, 9, 30, 0, 250000, tzinfo=UTC)),
        ("2020-01-01T00:00:00Z", datetime(2020, 1, 1, tzinfo=UTC)),  # past: run now
        ("2027-06-01T12:00:00Z", datetime(2027, 6, 1, 12, tzinfo=UTC)),  # exactly 1 year
    ],
)
def test_run_at_with_an_offset_is_accepted(value: str, expected: datetime) -> None:
    job = validate_job(body(runAt=value), now=NOW)
    assert job.run_at == expected
    assert job.run_at is not None and job.run_at.utcoffset() is not None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2026-06-02T09:30:00", "needs a UTC offset"),
        ("2026-06-02", "needs a UTC offset"),
        ("tomorrow", "not an ISO 8601 date-time"),
        (1780000000, "ISO 8601 date-time string"),
        ("2027-06-01T12:00:01Z", "at most 1 year ahead"),
    ],
)
def test_bad_run_at_is_refused(value: object, message: str) -> None:
    assert message in errors(body(runAt=value))["runAt"]


@pytest.mark.parametrize(
    ("value", "ok"),
    [(0, True), (31_536_000, True), (31_536_001, False), (-1, False), ("5", False), (1.5, False)],
)
def test_delay_seconds_bounds(value: object, ok: bool) -> None:
    if ok:
        assert validate_job(body(delaySeconds=value), now=NOW).delay_seconds == value
    else:
        assert "delaySeconds" in errors(body(delaySeconds=value))


def test_run_at_and_delay_seconds_are_exclusive() -> None:
    fields = errors(body(runAt="2026-06-02T00:00:00Z", delaySeconds=5))
    assert fields == {"delaySeconds": "give runAt or delaySeconds, not both"}


def test_first_run_time_comes_from_run_at_or_the_delay() -> None:
    assert request().first_run_at(NOW) is None
    assert request(delaySeconds=90).first_run_at(NOW) == NOW + timedelta(seconds=90)
    at = request(runAt="2026-06-01T14:00:00+02:00").first_run_at(NOW)
    assert at == datetime(2026, 6, 1, 12, tzinfo=UTC)


def test_inline_retry_policy_is_validated_like_the_contract() -> None:
    job = validate_job(
        body(
            retryPolicy={
                "strategy": "exponential",
                "baseDelayMs": 500,
                "multiplier": 2,
                "maxDelayMs": 60_000,
                "jitter": True,
            }
        ),
        now=NOW,
    )
    assert job.retry_policy == RetryPolicySpec(
        strategy="exponential", base_delay_ms=500, multiplier=2.0, max_delay_ms=60_000, jitter=True
    )
    assert job.retry_policy_name is None
    partial = validate_job(body(retryPolicy={"strategy": "fixed"}), now=NOW)
    assert partial.retry_policy == RetryPolicySpec(strategy="fixed")


@pytest.mark.parametrize(
    ("policy", "field"),
    [
        ({"strategy": "random"}, "retryPolicy.strategy"),
        ({"baseDelayMs": -1}, "retryPolicy.baseDelayMs"),
        ({"baseDelayMs": 86_400_001}, "retryPolicy.baseDelayMs"),
        ({"baseDelayMs": "100"}, "retryPolicy.baseDelayMs"),
        ({"multiplier": 0.5}, "retryPolicy.multiplier"),
        ({"multiplier": 101}, "retryPolicy.multiplier"),
        ({"maxDelayMs": 86_400_001}, "retryPolicy.maxDelayMs"),
        ({"jitter": "yes"}, "retryPolicy.jitter"),
        ({"baseDelayMs": 1000, "maxDelayMs": 999}, "retryPolicy"),
        ("Not A Slug", "retryPolicy"),
        ("", "retryPolicy"),
        ("x" * 65, "retryPolicy"),
        (7, "retryPolicy"),
        ([], "retryPolicy"),
    ],
)
def test_bad_retry_policy_is_reported_at_its_path(policy: object, field: str) -> None:
    assert field in errors(body(retryPolicy=policy))


def test_max_delay_below_base_delay_has_a_clear_message() -> None:
    fields = errors(body(retryPolicy={"baseDelayMs": 1000, "maxDelayMs": 999}))
    assert fields["retryPolicy"] == "maxDelayMs must be >= baseDelayMs"


def test_a_policy_name_is_kept_as_a_name() -> None:
    job = validate_job(body(retryPolicy="slow-and_steady-2"), now=NOW)
    assert job.retry_policy_name == "slow-and_steady-2"
    assert job.retry_policy is None


def test_depends_on_is_normalized_bounded_and_unique() -> None:
    job = validate_job(body(dependsOn=[PARENT.upper().replace("-", "")]), now=NOW)
    assert job.depends_on == (PARENT,)
    assert "dependsOn.1" in errors(body(dependsOn=[PARENT, "not-a-uuid"]))
    assert errors(body(dependsOn=[PARENT, PARENT.upper()]))["dependsOn"] == "entries must be unique"
    too_many = [str(uuid.uuid4()) for _ in range(101)]
    assert "dependsOn" in errors(body(dependsOn=too_many))
    assert validate_job(body(dependsOn=[]), now=NOW).depends_on == ()


def test_refs_are_refused_outside_a_batch() -> None:
    fields = errors(body(ref="a", dependsOn=["ref:a"]))
    assert {"ref", "dependsOn.0"} <= set(fields)


def test_unknown_and_foreign_parents_get_the_same_message() -> None:
    mine, theirs, missing = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    owners = {mine: "user@test.com", theirs: "other@test.com"}
    details = unknown_parents(
        [("dependsOn.0", mine), ("dependsOn.1", theirs), ("dependsOn.2", missing)],
        owners,
        "user@test.com",
    )
    assert details == [
        ErrorDetail(field="dependsOn.1", message="unknown job"),
        ErrorDetail(field="dependsOn.2", message="unknown job"),
    ]


def test_request_hash_covers_the_scheduling_fields() -> None:
    plain = request().request_hash()
    variants = [
        request(delaySeconds=5),
        request(delaySeconds=6),
        request(runAt="2026-06-02T00:00:00Z"),
        request(retryPolicy={"strategy": "fixed"}),
        request(retryPolicy="named"),
        request(dependsOn=[PARENT]),
    ]
    hashes = {v.request_hash() for v in variants}
    assert len(hashes) == len(variants)
    assert plain not in hashes
    # the same instant in another offset, and parents in another order, hash the same
    assert (
        request(runAt="2026-06-02T02:00:00+02:00").request_hash()
        == request(runAt="2026-06-02T00:00:00Z").request_hash()
    )
    other = str(uuid.uuid4())
    assert (
        request(dependsOn=[PARENT, other]).request_hash()
        == request(dependsOn=[other, PARENT]).request_hash()
    )


def test_request_hash_without_scheduling_fields_is_unchanged() -> None:
    """Hashes stored before the new fields existed must still match a replay."""
    canonical = request().canonical()
    assert set(canonical) == {
        "type",
        "priority",
        "submittedBy",
        "payload",
        "maxAttempts",
        "timeoutSeconds",
    }


def test_document_and_message_carry_the_scheduling_fields() -> None:
    job = request(
        delaySeconds=30,
        retryPolicy={"strategy": "linear", "baseDelayMs": 100, "jitter": False},
        dependsOn=[PARENT],
    )
    doc = new_document(job, job_id=str(uuid.uuid4()), idempotency_key=None, trace_id="t", now=NOW)
    assert doc["runAtMs"] == int((NOW + timedelta(seconds=30)).timestamp() * 1000)
    assert doc["delaySeconds"] == 30
    assert doc["retryPolicy"] == {"strategy": "linear", "baseDelayMs": 100, "jitter": False}
    assert doc["retryPolicyName"] is None
    assert doc["dependsOn"] == [PARENT]
    assert doc["batchId"] is None and doc["batchSize"] is None
    message = job_submitted(doc)
    assert message.run_at == NOW + timedelta(seconds=30)
    assert message.retry_policy == RetryPolicySpec(
        strategy="linear", base_delay_ms=100, jitter=False
    )
    assert message.retry_policy_name is None
    assert [str(p) for p in message.depends_on] == [PARENT]
    assert message.batch_id is None and message.batch_size is None
    view = public_view(doc)
    assert view.run_at == NOW + timedelta(seconds=30)
    assert view.depends_on == [PARENT]

    named = new_document(
        request(retryPolicy="gentle"),
        job_id=str(uuid.uuid4()),
        idempotency_key=None,
        trace_id="t",
        now=NOW,
        batch=(PARENT, 3),
    )
    message = job_submitted(named)
    assert message.retry_policy_name == "gentle" and message.retry_policy is None
    assert message.run_at is None
    assert str(message.batch_id) == PARENT and message.batch_size == 3


def test_documents_stored_before_the_scheduling_fields_still_relay() -> None:
    doc = new_document(
        request(), job_id=str(uuid.uuid4()), idempotency_key=None, trace_id="t", now=NOW
    )
    for key in ("runAtMs", "delaySeconds", "retryPolicy", "retryPolicyName", "dependsOn", "ref"):
        del doc[key]
    for key in ("batchId", "batchSize"):
        del doc[key]
    message = job_submitted(doc)
    assert message.run_at is None and message.depends_on == [] and message.batch_id is None
