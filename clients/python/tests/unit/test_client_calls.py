"""The wire shapes the clients send (camelCase, only what was given) and the reading of
answers, live-event frames and wait bookkeeping, all without I/O."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ConfigDict, Field

from jobs_client import JobSpec, RetryPolicy, calls
from jobs_client.models import Job, JobProgress, Submitted, Tokens
from jobs_client.waiting import (
    PollPause,
    SeenIds,
    WaitState,
    events_url,
    parse_frame,
    wanted_ids,
)

pytestmark = pytest.mark.unit

SUMMARY: dict[str, Any] = {
    "jobId": "11111111-1111-4111-8111-111111111111",
    "type": "simulate",
    "priority": 2,
    "status": "succeeded",
    "attempt": 1,
    "maxAttempts": 3,
    "submittedBy": "user@test.com",
    "createdAt": "2025-01-02T03:04:05.123456Z",
    "updatedAt": "2025-01-02T03:04:06Z",
    "startedAt": None,
    "finishedAt": "2025-01-02T03:04:06+00:00",
    "lastError": None,
    "scheduleId": None,
    "batchId": None,
    "runAt": None,
    "dependsOn": [],
}


def test_a_job_body_names_fields_as_the_api_does_and_leaves_out_what_was_not_given() -> None:
    at = datetime(2030, 1, 1, 12, tzinfo=UTC)
    body = calls.job_body(
        type="simulate",
        payload={"minSeconds": 0},
        priority=3,
        run_at=at,
        max_attempts=2,
        retry_policy=RetryPolicy(strategy="fixed", base_delay_ms=100),
        depends_on=["a", "b"],
    )
    assert body == {
        "type": "simulate",
        "priority": 3,
        "payload": {"minSeconds": 0},
        "runAt": "2030-01-01T12:00:00+00:00",
        "maxAttempts": 2,
        "retryPolicy": {"strategy": "fixed", "baseDelayMs": 100},
        "dependsOn": ["a", "b"],
    }
    # No priority given: none sent, so the job takes its queue's default priority (else 2).
    assert calls.job_body(type="t", payload={}) == {"type": "t", "payload": {}}
    assert calls.job_body(type="t", payload={}, delay=timedelta(seconds=1.2))["delaySeconds"] == 2
    assert calls.job_body(type="t", payload={}, retry_policy="gentle")["retryPolicy"] == "gentle"
    assert calls.job_body(type="t", payload={}, queue="reports")["queue"] == "reports"
    assert calls.spec_body(JobSpec(type="t", payload={}, queue="reports"))["queue"] == "reports"
    # JobSpec.delay takes a timedelta as submit's delay does (docs/client.md).
    spec = JobSpec(type="t", payload={}, delay=timedelta(seconds=1.5))
    assert calls.spec_body(spec)["delaySeconds"] == 2


def test_a_submission_carries_a_fresh_uuid_key_unless_given_one() -> None:
    first = calls.submit({"type": "t"}, None)
    second = calls.submit({"type": "t"}, None)
    assert first.headers["Idempotency-Key"] != second.headers["Idempotency-Key"]
    assert len(first.headers["Idempotency-Key"]) == 36
    assert calls.submit({"type": "t"}, "mine").headers == {"Idempotency-Key": "mine"}
    parsed = first.parse(httpx.Response(202, json={"jobId": "j", "status": "accepted"}))
    assert parsed.idempotency_key == first.headers["Idempotency-Key"]
    assert first.replay_safe and (first.method, first.path) == ("POST", "/api/jobs")


def test_a_batch_takes_specs_with_refs() -> None:
    call = calls.submit_batch(
        [
            JobSpec(type="simulate", payload={}, ref="a"),
            JobSpec(type="simulate", payload={}, depends_on=["ref:a"], delay=5),
            {"type": "email", "priority": 1, "payload": {"to": "x@example.com"}},
        ],
        name="nightly",
        submitted_by=None,
        idempotency_key="k",
    )
    assert call.body["name"] == "nightly"
    assert call.body["jobs"][0] == {"type": "simulate", "payload": {}, "ref": "a"}
    assert call.body["jobs"][1]["dependsOn"] == ["ref:a"]
    assert call.body["jobs"][1]["delaySeconds"] == 5
    assert call.headers == {"Idempotency-Key": "k"}


def test_listing_parameters_repeat_statuses_and_drop_nones() -> None:
    call = calls.list_jobs(status=["queued", "running"], type="simulate", page_size=5)
    assert call.params == (
        ("status", "queued"),
        ("status", "running"),
        ("type", "simulate"),
        ("pageNumber", "1"),
        ("pageSize", "5"),
    )
    assert calls.get_job("../x").path == "/api/jobs/..%2Fx"


def test_a_schedule_template_names_a_stored_policy_apart_from_an_inline_one() -> None:
    named = calls.create_schedule(
        name="n",
        cron="0 3 * * *",
        timezone="UTC",
        type="simulate",
        payload={},
        priority=2,
        max_attempts=None,
        timeout_seconds=None,
        retry_policy="gentle",
    )
    assert named.body["jobTemplate"] == {
        "type": "simulate",
        "priority": 2,
        "payload": {},
        "retryPolicyName": "gentle",
    }


def test_jobs_are_read_with_aware_datetimes_and_keep_the_raw_answer() -> None:
    job = Job.from_json(SUMMARY)
    assert job.created_at.tzinfo is not None and job.finished and job.succeeded
    assert not job.detailed and job.raw == SUMMARY
    detail = Job.from_json(SUMMARY | {"payload": {"a": 1}, "result": {"ok": True}, "attempts": []})
    assert detail.detailed and detail.payload == {"a": 1} and detail.result == {"ok": True}
    assert detail.progress is None
    running = Job.from_json(
        SUMMARY | {"status": "running", "payload": {}, "progress": {"percent": 40, "message": "x"}}
    )
    assert running.progress == JobProgress(40.0, "x")


def test_tokens_expire_by_the_local_clock() -> None:
    tokens = Tokens.from_login(
        {
            "token": "a",
            "refreshToken": "r",
            "expiresIn": 900,
            "user": {"email": "e", "role": "user"},
        },
        now=1000.0,
    )
    assert (tokens.expires_at, tokens.email, tokens.role) == (1900.0, "e", "user")


def test_events_url_follows_the_scheme_and_quotes_the_token() -> None:
    assert events_url("http://h:3000", "a.b+c") == "ws://h:3000/ws/events?token=a.b%2Bc"
    assert events_url("https://h/base/", "t") == "wss://h/base/ws/events?token=t"


def test_wait_state_follows_pushed_changes_and_reports_progress() -> None:
    seen: list[int] = []
    state = WaitState(["a", "b", "a"], on_progress=lambda p: seen.append(p.finished))
    assert state.ids == ["a", "b"]
    frame = parse_frame(
        '{"type":"job.changes","changes":['
        '{"jobId":"a","attempt":1,"fromStatus":"running","toStatus":"succeeded"},'
        '{"jobId":"zzz","attempt":1,"fromStatus":null,"toStatus":"pending"},'
        '{"jobId":"b","attempt":1,"fromStatus":"queued","toStatus":"running"}]}'
    )
    assert state.terminal_changes(frame.changes) == ["a"]
    assert state.statuses == {"a": "succeeded", "b": "running"}
    assert seen == [1]
    state.observe(Job.from_json(SUMMARY | {"jobId": "b", "status": "dead"}))
    assert state.pending() == ["a"]  # a's detail not read yet
    assert parse_frame('{"type":"hello","user":{}}').changes == []


def test_poll_pause_grows_to_its_ceiling_and_listings_drop_repeats() -> None:
    pause = PollPause(first=0.2, ceiling=0.5)
    assert [round(pause.next(), 2) for _ in range(4)] == [0.2, 0.3, 0.45, 0.5]
    seen = SeenIds()
    assert [seen.fresh(i) for i in ("a", "b", "a")] == [True, True, False]


def test_a_pydantic_payload_is_sent_as_its_json_by_alias_nested_models_and_all() -> None:
    """A model passed as a payload kept neither its aliases nor its nested models (it was
    ``dict(model)``); it is sent as the API reads it."""

    class Line(BaseModel):
        unit_cents: int = Field(alias="unitCents")

    class Invoice(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        customer: str
        lines: list[Line]
        due: date

    invoice = Invoice(customer="c-1", lines=[Line(unitCents=150)], due=date(2030, 1, 2))
    body = calls.job_body(type="acme.invoice", payload=invoice)
    assert body["payload"] == {
        "customer": "c-1",
        "lines": [{"unitCents": 150}],
        "due": "2030-01-02",
    }
    assert calls.spec_body(JobSpec(type="t", payload=invoice))["payload"] == body["payload"]
    assert calls.payload_json({"a": 1}) == {"a": 1}


def test_a_wait_takes_ids_or_what_submit_returned() -> None:
    submitted = Submitted(job_id="j1", status="accepted", idempotency_key="k")
    assert wanted_ids(submitted) == (["j1"], True)
    assert wanted_ids("j2") == (["j2"], True)
    assert wanted_ids([submitted, "j2"]) == (["j1", "j2"], False)
