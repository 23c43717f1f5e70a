"""How the worker tells a handler what the submission service answered a follow-up
(``adapters/follow_ups.py``): a refusal is permanent, an outage or throttle a retry later."""

from __future__ import annotations

import uuid

import httpx
import pytest

from jobs_sdk.follow_ups import FollowUp, SubmitRefused, SubmitUnavailable
from jobs_worker.adapters.follow_ups import body, refused

pytestmark = pytest.mark.unit

FOLLOW_UP = FollowUp(
    job_type="acme.resize",
    payload={"width": 10},
    key="follow-up:x:1",
    from_job=uuid.uuid4(),
    trace_id="t",
    submitted_by="user@test.com",
    project_id=uuid.uuid4(),
    delay_seconds=5,
)


def test_the_body_names_only_what_the_call_set() -> None:
    assert body(FOLLOW_UP) == {
        "type": "acme.resize",
        "payload": {"width": 10},
        "projectId": str(FOLLOW_UP.project_id),
        "delaySeconds": 5,
    }


def test_a_validation_error_is_refused_naming_its_fields() -> None:
    answer = httpx.Response(
        422,
        json={
            "error": "validation_error",
            "message": "request validation failed",
            "details": [{"field": "payload.width", "message": "not an integer"}],
        },
    )
    with pytest.raises(SubmitRefused, match=r"payload\.width: not an integer") as refusal:
        refused(answer, 5.0)
    assert (refusal.value.status, refusal.value.error) == (422, "validation_error")


@pytest.mark.parametrize(
    ("status", "headers", "delay"), [(503, {}, 5.0), (429, {"Retry-After": "12"}, 12.0)]
)
def test_an_outage_or_a_throttle_retries_the_attempt_later(
    status: int, headers: dict[str, str], delay: float
) -> None:
    with pytest.raises(SubmitUnavailable) as later:
        refused(httpx.Response(status, headers=headers, text="busy"), 5.0)
    assert later.value.delay_seconds == delay
