"""Messages across a rolling deploy: a reader of the previous release takes a message with a
field a later release added (the message is not poison, its job not lost), and still refuses
a version it does not know."""

from __future__ import annotations

import uuid

import orjson
import pytest

from jobs_common.contracts import JobDispatch, JobResult, WorkerTypes, parse_message, utcnow

pytestmark = pytest.mark.unit


def dispatch_json(**extra: object) -> bytes:
    dispatch = JobDispatch(
        job_id=uuid.uuid4(),
        attempt=1,
        job_type="simulate",
        payload={"durationMs": 0},
        timeout_seconds=30,
        priority=2,
        dispatched_at=utcnow(),
    )
    return orjson.dumps({**dispatch.model_dump(mode="json"), **extra})


def test_a_field_a_later_release_added_is_ignored() -> None:
    body = dispatch_json(tenant_hint="eu-1", parents_v2=[{"jobId": "x"}])
    parsed = parse_message(JobDispatch, body)
    assert parsed.job_type == "simulate" and not hasattr(parsed, "tenant_hint")


def test_nested_records_ignore_new_fields_too() -> None:
    result = JobResult(
        job_id=uuid.uuid4(),
        attempt=1,
        worker_id="w",
        outcome="failed",
        error={"kind": "retryable", "error_class": "E", "message": "m", "hint": "new"},
        started_at=utcnow(),
        finished_at=utcnow(),
    )
    assert result.error is not None and result.error.message == "m"
    types = {"worker_id": "w", "sent_at": utcnow().isoformat(), "types": [], "region": "eu"}
    assert parse_message(WorkerTypes, orjson.dumps(types)).worker_id == "w"


def test_an_unknown_version_is_still_refused() -> None:
    with pytest.raises(ValueError):
        parse_message(JobDispatch, dispatch_json(v=2))
