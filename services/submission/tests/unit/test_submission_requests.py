from __future__ import annotations

import base64
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest

from jobs_common.auth import Identity
from jobs_common.errors import Forbidden, ValidationFailed
from jobs_submission.domain.documents import job_submitted, new_document, public_view
from jobs_submission.domain.outbox import retry_delay_ms
from jobs_submission.domain.requests import (
    JobRequest,
    resolve_owner,
)
from jobs_submission.domain.requests import (
    validate_job as validate_job_in,
)

from .conftest import BUILTINS

pytestmark = pytest.mark.unit

validate_job = partial(validate_job_in, catalog=BUILTINS)

USER = Identity(user_id="u1", email="user@test.com", role="user")
ADMIN = Identity(user_id="a1", email="admin@test.com", role="admin")
JOB_ID = "7d8f5f8e-7a5e-4a8e-9d5e-0c2f3b1a9e11"
NOW = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def email_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "email",
        "priority": 2,
        "payload": {"to": "someone@example.com", "subject": "hi", "body": "hello"},
    }
    body.update(overrides)
    return body


def fields_of(data: object) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_job(data)
    assert caught.value.status_code == 422
    assert caught.value.code == "validation_error"
    return {d.field: d.message for d in caught.value.details}


def test_valid_email_submission_is_normalized() -> None:
    job = validate_job(email_body(maxAttempts=3, timeoutSeconds=60))
    assert job.job_type == "email"
    assert job.priority == 2
    assert job.max_attempts == 3
    assert job.timeout_seconds == 60
    assert job.payload == {"to": "someone@example.com", "subject": "hi", "body": "hello"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (email_body(priority=0), "priority"),
        (email_body(priority=4), "priority"),
        (email_body(priority="2"), "priority"),
        (email_body(priority=True), "priority"),
        (email_body(maxAttempts=21), "maxAttempts"),
        (email_body(timeoutSeconds=1701), "timeoutSeconds"),
        (email_body(timeoutSeconds=0), "timeoutSeconds"),
        (email_body(submittedBy="not-an-email"), "submittedBy"),
        (email_body(runAt="2030-01-01T00:00:00"), "runAt"),
        (email_body(batchId="7d8f5f8e-7a5e-4a8e-9d5e-0c2f3b1a9e11"), "batchId"),
        (email_body(type="teleport"), "type"),
        (email_body(payload="nope"), "payload"),
        ({"type": "email", "priority": 1}, "payload"),
        ({"priority": 1, "payload": {}}, "type"),
        (email_body(payload={"to": "bad", "subject": "s", "body": "b"}), "payload.to"),
        (
            email_body(payload={"to": "a@example.com", "subject": "", "body": "b"}),
            "payload.subject",
        ),
        (email_body(payload={"to": "a@example.com", "subject": "s"}), "payload.body"),
        (
            email_body(payload={"to": "a@example.com", "subject": "s", "body": "b", "x": 1}),
            "payload.x",
        ),
        (
            {
                "type": "image_resize",
                "priority": 1,
                "payload": {"imageBase64": "@@", "width": 1, "height": 1},
            },
            "payload.imageBase64",
        ),
        (
            {
                "type": "image_resize",
                "priority": 1,
                "payload": {"imageBase64": PNG, "width": 0, "height": 1},
            },
            "payload.width",
        ),
        (
            {"type": "report_generation", "priority": 1, "payload": {"reportType": "jobs_summary"}},
            "payload.format",
        ),
        ({"type": "simulate", "priority": 1, "payload": {"failureRate": 2}}, "payload.failureRate"),
    ],
)
def test_invalid_field_is_reported_with_its_path(body: dict[str, Any], field: str) -> None:
    assert field in fields_of(body)


REPORT = {"reportType": "jobs_summary", "format": "csv"}


@pytest.mark.parametrize(
    ("job_type", "disordered", "ordered", "field"),
    [
        (
            "simulate",
            {"minSeconds": 5, "maxSeconds": 1},
            {"minSeconds": 1, "maxSeconds": 5},
            "maxSeconds",
        ),
        ("simulate", {"maxSeconds": 0.5}, {"maxSeconds": 1}, "maxSeconds"),  # the default min: 1
        (
            "report_generation",
            {**REPORT, "from": "2026-03-02", "to": "2026-03-01"},
            {**REPORT, "from": "2026-03-01", "to": "2026-03-01"},
            "to",
        ),
    ],
)
def test_fields_out_of_order_are_refused_at_submission(
    job_type: str, disordered: dict[str, Any], ordered: dict[str, Any], field: str
) -> None:
    """x-ordered: what the handler's model refuses (minSeconds > maxSeconds, from after to)
    is a 422 on the upper field, not a job that dies on its first attempt."""
    refused = fields_of({"type": job_type, "priority": 2, "payload": disordered})
    assert list(refused) == [f"payload.{field}"]
    validate_job({"type": job_type, "priority": 2, "payload": ordered})


def test_all_problems_are_reported_together() -> None:
    fields = fields_of(email_body(priority=9, payload={"to": "x", "subject": "s", "body": "b"}))
    assert set(fields) == {"priority", "payload.to"}


def test_non_object_body_is_a_validation_error() -> None:
    assert "body" in fields_of([1, 2, 3])


def test_valid_payloads_of_every_builtin_type() -> None:
    for body in (
        {
            "type": "image_resize",
            "priority": 3,
            "payload": {"imageBase64": PNG, "width": 10, "height": 5},
        },
        {
            "type": "report_generation",
            "priority": 1,
            "payload": {"reportType": "jobs_summary", "format": "csv", "from": "2024-01-01"},
        },
        {"type": "simulate", "priority": 1, "payload": {}},
    ):
        assert validate_job(body).job_type == body["type"]


def request_for(body: dict[str, Any], identity: Identity = USER) -> JobRequest:
    return resolve_owner(validate_job(body), identity)


def test_request_hash_is_stable_across_key_order_and_defaults() -> None:
    a = request_for(email_body())
    b = request_for(
        {
            "payload": {"body": "hello", "subject": "hi", "to": "someone@example.com"},
            "submittedBy": "USER@test.com",
            "priority": 2,
            "type": "email",
        }
    )
    assert a.request_hash() == b.request_hash()
    assert len(a.request_hash()) == 64
    sim_default = request_for({"type": "simulate", "priority": 1, "payload": {}})
    sim_explicit = request_for({"type": "simulate", "priority": 1, "payload": {"failureRate": 0.0}})
    assert sim_default.request_hash() == sim_explicit.request_hash()


@pytest.mark.parametrize(
    "change",
    [
        {"priority": 3},
        {"maxAttempts": 2},
        {"timeoutSeconds": 5},
        {"payload": {"to": "someone@example.com", "subject": "hi", "body": "other"}},
        {"queue": "emails"},
    ],
)
def test_request_hash_changes_with_the_request(change: dict[str, Any]) -> None:
    assert (
        request_for(email_body()).request_hash() != request_for(email_body(**change)).request_hash()
    )


def test_a_job_names_its_queue_else_it_runs_in_its_type_s() -> None:
    """docs/flow-control.md: ``queue`` in the submission, else the type's, else default; the
    hash of a request that names none is the one stored before queues could be named."""
    named = validate_job(email_body(queue="emails"))
    assert (named.queue, named.queue_named) == ("emails", True)
    plain = validate_job(email_body())
    assert (plain.queue, plain.queue_named) == ("default", False)
    assert "queue" not in request_for(email_body()).canonical()
    assert request_for(email_body(queue="emails")).canonical()["queue"] == "emails"
    for bad in ("Emails", "1st", "a" * 64, "", "e mails"):
        assert set(fields_of(email_body(queue=bad))) == {"queue"}, bad


def test_a_job_naming_no_priority_takes_its_queue_s_default() -> None:
    """docs/flow-control.md: left out, the priority is null in the document and the hash, and
    the message carries medium marked as a default for the scheduler to replace."""
    body = email_body()
    del body["priority"]
    request = request_for(body)
    assert request.priority is None
    assert request.canonical()["priority"] is None
    assert request.request_hash() != request_for(email_body(priority=2)).request_hash()
    doc = new_document(request, job_id=JOB_ID, idempotency_key=None, trace_id="t", now=NOW)
    assert doc["priority"] is None
    message = job_submitted(doc)
    assert (message.priority, message.priority_default) == (2, True)
    assert public_view(doc).priority is None
    named = job_submitted(
        new_document(
            request_for(email_body(priority=3)),
            job_id=JOB_ID,
            idempotency_key=None,
            trace_id="t",
            now=NOW,
        )
    )
    assert (named.priority, named.priority_default) == (3, False)
    for bad in (0, 4, "2", 2.0):
        assert set(fields_of(email_body(priority=bad))) == {"priority"}, bad


def test_a_job_naming_no_timeout_carries_its_type_s_marked_as_a_default() -> None:
    """docs/flow-control.md: the type's declared timeout is filled in, marked, so that the
    scheduler gives the job its queue's default timeout first; a timeout named is kept."""
    request = request_for(email_body())
    doc = new_document(request, job_id=JOB_ID, idempotency_key=None, trace_id="t", now=NOW)
    message = job_submitted(doc)
    assert (message.timeout_seconds, message.timeout_default) == (300, True)
    named = request_for(email_body(timeoutSeconds=20))
    doc = new_document(named, job_id=JOB_ID, idempotency_key=None, trace_id="t", now=NOW)
    assert (job_submitted(doc).timeout_seconds, job_submitted(doc).timeout_default) == (20, False)


def test_submitted_by_defaults_to_the_caller() -> None:
    assert request_for(email_body()).submitted_by == "user@test.com"


def test_user_may_name_themselves_in_any_case() -> None:
    assert request_for(email_body(submittedBy="User@Test.com")).submitted_by == "user@test.com"


def test_user_may_not_submit_for_someone_else() -> None:
    with pytest.raises(Forbidden):
        request_for(email_body(submittedBy="other@test.com"))


def test_admin_may_submit_for_someone_else() -> None:
    assert (
        request_for(email_body(submittedBy="other@test.com"), ADMIN).submitted_by
        == "other@test.com"
    )


def test_document_carries_a_pending_outbox_and_maps_to_the_message() -> None:
    now = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    request = request_for(email_body(maxAttempts=4))
    doc = new_document(
        request,
        job_id="7d8f5f8e-7a5e-4a8e-9d5e-0c2f3b1a9e11",
        idempotency_key="k",
        trace_id="t",
        now=now,
    )
    assert doc["status"] == "accepted"
    assert doc["outbox"] == {
        "state": "pending",
        "attempts": 0,
        "nextAttemptAtMs": 1735787045678,
        "claimToken": None,
        "claimedUntilMs": 0,
        "lastError": None,
    }
    message = job_submitted(doc)
    assert str(message.job_id) == doc["_id"]
    assert str(message.message_id) == doc["messageId"]
    assert message.trace_id == "t"
    assert message.submitted_at == now
    assert message.max_attempts == 4
    assert message.timeout_seconds == 300  # the type's default, as its worker announced it
    view = public_view({**doc, "status": "published", "publishedAtMs": 1735787046000})
    assert view.published_at == datetime(2025, 1, 2, 3, 4, 6, tzinfo=UTC)
    assert view.created_at == now
    assert public_view(doc).published_at is None


def test_retry_delay_grows_and_is_capped() -> None:
    delays = [retry_delay_ms(n, base_seconds=1, max_seconds=30) for n in range(1, 8)]
    assert delays == [1000, 2000, 4000, 8000, 16000, 30000, 30000]
