"""What intake blames on a job (app/intake.py): only text in its own fields that no store can
hold, found by the same pure check the API applies, never the database's error alone."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from jobs_common.contracts import JobSubmitted, utcnow
from jobs_scheduler.app.intake import kept_body, unstorable_field

pytestmark = pytest.mark.unit


def job(**overrides: Any) -> JobSubmitted:
    fields: dict[str, Any] = {
        "job_id": uuid.uuid4(),
        "job_type": "acme.reverse",
        "priority": 2,
        "payload": {"text": "héllo ✓"},
        "submitted_by": "user@test.com",
        "submitted_at": utcnow(),
    }
    return JobSubmitted(**(fields | overrides))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({}, None),
        ({"payload": {"text": "a\x00b"}}, "payload.text"),
        ({"payload": {"items": [{"k\ud800": 1}]}}, "payload.items.0.k\\ud800"),
        ({"payload": {"a": [1, {"b": "\udc00"}]}}, "payload.a.1.b"),
        ({"job_type": "x\x00"}, "type"),
        ({"submitted_by": "a\x00@b.c"}, "submittedBy"),
        ({"retry_policy_name": "p\x00"}, "retryPolicyName"),
        ({"trace_id": "t\x00"}, "traceId"),
    ],
)
def test_only_text_no_store_can_hold_is_the_jobs_fault(
    overrides: dict[str, Any], field: str | None
) -> None:
    assert unstorable_field(job(**overrides)) == field


def test_a_poison_body_is_written_whatever_the_job_holds() -> None:
    broken = job(payload={"k\ud800": "a\x00b"})
    body = kept_body(broken)
    assert json.loads(body)["payload"] == {"k\ud800": "a\x00b"}
