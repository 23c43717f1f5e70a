"""Per-field limits of a submission and a batch, with their field paths, and the body limits'
defaults against what those fields allow."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

import pytest

from jobs_common.auth import Identity
from jobs_common.body_limit import BATCH_MAX_BODY_BYTES, DEFAULT_MAX_BODY_BYTES, JOB_MAX_BODY_BYTES
from jobs_common.errors import ValidationFailed
from jobs_common.payloads import MAX_PAYLOAD_BYTES
from jobs_submission.api.limits import body_limits
from jobs_submission.domain.batches import (
    MAX_BATCH_PAYLOAD_BYTES,
    MAX_BATCH_SIZE,
    payload_bytes,
)
from jobs_submission.domain.batches import (
    validate_batch as validate_batch_in,
)
from jobs_submission.domain.requests import validate_job as validate_job_in
from jobs_submission.settings import Settings

from .conftest import BUILTINS

pytestmark = pytest.mark.unit

validate_batch = partial(validate_batch_in, catalog=BUILTINS)

validate_job = partial(validate_job_in, catalog=BUILTINS)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
USER = Identity(user_id="u1", email="user@test.com", role="user")


def job_errors(data: object) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_job(data, now=NOW)
    return {d.field: d.message for d in caught.value.details}


def batch_errors(data: object) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_batch(data, identity=USER, now=NOW)
    return {d.field: d.message for d in caught.value.details}


def test_an_oversized_payload_is_named_by_its_field() -> None:
    big = {"type": "simulate", "priority": 1, "payload": {"pad": "x" * MAX_PAYLOAD_BYTES}}
    assert set(job_errors(big)) == {"payload"}
    assert "at most 262144 bytes" in job_errors(big)["payload"]
    small = {"type": "simulate", "priority": 1, "payload": {}}
    assert set(batch_errors({"jobs": [small, big]})) == {"jobs.1.payload"}


def test_a_crlf_subject_is_refused_at_submission() -> None:
    job = {
        "type": "email",
        "priority": 2,
        "payload": {"to": "a@example.com", "subject": "hi\r\nBcc: v@example.com", "body": "b"},
    }
    assert job_errors(job) == {
        "payload.subject": "must not contain control characters or line breaks"
    }


def test_a_batch_is_bounded_in_size_and_in_payload_bytes() -> None:
    small = {"type": "simulate", "priority": 1, "payload": {}}
    assert set(batch_errors({"jobs": [small] * (MAX_BATCH_SIZE + 1)})) == {"jobs"}
    member = {
        "type": "email",
        "priority": 1,
        "payload": {"to": "a@example.com", "subject": "s", "body": "x" * 99_000},
    }
    count = MAX_BATCH_PAYLOAD_BYTES // payload_bytes([member]) + 1
    refused = batch_errors({"jobs": [member] * count})
    assert set(refused) == {"jobs"} and "bytes of JSON" in refused["jobs"]
    within = validate_batch({"jobs": [member] * (count - 1)}, identity=USER, now=NOW)
    assert within.size == count - 1


def test_the_body_limits_leave_room_for_what_the_fields_allow() -> None:
    settings = Settings(environment="development")
    limits = body_limits(settings)
    assert limits.for_path("/api/v1/jobs") == JOB_MAX_BODY_BYTES
    assert limits.for_path("/api/v1/batches") == BATCH_MAX_BODY_BYTES
    assert limits.for_path("/api/v1/jobs/x/status") == DEFAULT_MAX_BODY_BYTES
    # a largest image job (its bound as the worker announces it), and a batch whose payloads
    # reach their total, both fit their body
    image = BUILTINS.announced["image_resize"].compiled
    assert image is not None and image.max_bytes > MAX_PAYLOAD_BYTES
    assert JOB_MAX_BODY_BYTES > image.max_bytes + 64 * 1024
    assert BATCH_MAX_BODY_BYTES > MAX_BATCH_PAYLOAD_BYTES + MAX_BATCH_SIZE * 256


@pytest.mark.parametrize("job_type", ["", None, 7, ["simulate"]])
def test_a_missing_or_empty_type_is_a_validation_error(job_type: object) -> None:
    """Found by the fuzzer: an empty type with a payload object was looked up as a payload
    model and answered 500."""
    job = {"type": job_type, "priority": 3, "payload": {"": {}}}
    assert set(job_errors(job)) == {"type"}
    assert set(batch_errors({"jobs": [job]})) == {"jobs.0.type"}
