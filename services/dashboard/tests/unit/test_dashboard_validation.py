"""Request validation of retry policies, schedules, requeue payloads and bulk selectors."""

import base64
import os
from typing import Any

import pytest
from pydantic import ValidationError

from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_common.retry_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_SECONDS
from jobs_common.retry_policy_commands import RetryPolicyCreate
from jobs_dashboard.domain.dead_letters import BulkAction, BulkRequest, BulkSelector
from jobs_dashboard.domain.payloads import CheckedPayload, check_payload, moved_under
from jobs_dashboard.domain.query import Visibility
from jobs_dashboard.domain.retry_policies import DEFAULT_POLICY
from jobs_dashboard.domain.schedules import JobTemplate, ScheduleCreate

pytestmark = pytest.mark.unit

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()


USER = Identity(user_id="u1", email="user@test.com", role="user")


class Registry:
    """The submission service's answer, recorded (adapters/job_types.py talks to the real
    one in the integration tests)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def check(
        self, job_type: str, payload: dict[str, Any], *, identity: Identity, prefix: str
    ) -> CheckedPayload:
        self.asked.append((job_type, prefix))
        return CheckedPayload(payload, queue="acme", max_attempts=5, timeout_seconds=30)


def policy(**overrides: Any) -> dict[str, Any]:
    return {
        "name": "slow-retries",
        "strategy": "linear",
        "baseDelayMs": 500,
        "multiplier": 1.5,
        "maxDelayMs": 10_000,
        "jitter": False,
        **overrides,
    }


def error_fields(exc: ValidationError) -> set[str]:
    return {".".join(str(p) for p in error["loc"]) for error in exc.errors()}


def test_a_valid_policy() -> None:
    created = RetryPolicyCreate.model_validate(policy(maxAttempts=7))
    assert (created.name, created.strategy, created.max_attempts) == ("slow-retries", "linear", 7)
    assert RetryPolicyCreate.model_validate(policy(name="a")).name == "a"
    assert RetryPolicyCreate.model_validate(policy(name="x" * 64)).max_attempts is None


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "Has Caps"}, "name"),
        ({"name": "-leading"}, "name"),
        ({"name": "x" * 65}, "name"),
        ({"name": "a/b"}, "name"),
        ({"strategy": "random"}, "strategy"),
        ({"multiplier": 0.5}, "multiplier"),
        ({"baseDelayMs": -1}, "baseDelayMs"),
        ({"maxDelayMs": 100}, "maxDelayMs"),  # below baseDelayMs
        ({"maxAttempts": 0}, "maxAttempts"),
        ({"maxAttempts": 21}, "maxAttempts"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_invalid_policies(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        RetryPolicyCreate.model_validate(policy(**overrides))
    assert field in error_fields(caught.value)


def test_default_policy_is_the_builtin_one() -> None:
    assert DEFAULT_POLICY.model_dump(by_alias=True) == {
        "strategy": "exponential",
        "baseDelayMs": 1000,
        "multiplier": 2.0,
        "maxDelayMs": 60000,
        "jitter": True,
        "maxAttempts": None,
    }


def schedule(**overrides: Any) -> dict[str, Any]:
    template = {
        "type": "email",
        "priority": 2,
        "payload": {"to": "a@example.com", "subject": "hi", "body": "there"},
    }
    template.update(overrides.pop("jobTemplate", {}))
    return {
        "name": "nightly",
        "cron": "0 2 * * *",
        "timezone": "Europe/Berlin",
        "jobTemplate": template,
        **overrides,
    }


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"cron": "0 2 * *"}, "cron"),
        ({"cron": "0 2 * * * *"}, "cron"),
        ({"cron": "@daily"}, "cron"),
        ({"cron": "99 2 * * *"}, "cron"),
        ({"timezone": "Mars/Base"}, "timezone"),
        ({"name": "   "}, "name"),
        ({"jobTemplate": {"type": ""}}, "jobTemplate.type"),
        ({"jobTemplate": {"priority": 4}}, "jobTemplate.priority"),
        ({"jobTemplate": {"priority": "2"}}, "jobTemplate.priority"),
        ({"jobTemplate": {"maxAttempts": 21}}, "jobTemplate.maxAttempts"),
        ({"jobTemplate": {"timeoutSeconds": 1701}}, "jobTemplate.timeoutSeconds"),
        ({"jobTemplate": {"retryPolicy": {"strategy": "x"}}}, "jobTemplate.retryPolicy.strategy"),
        ({"jobTemplate": {"retryPolicyName": "Bad Name"}}, "jobTemplate.retryPolicyName"),
        ({"jobTemplate": {"extra": 1}}, "jobTemplate.extra"),
    ],
)
def test_invalid_schedules(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ScheduleCreate.model_validate(schedule(**overrides))
    assert field in error_fields(caught.value)


async def test_schedule_template_is_stored_camel_case_with_the_validated_payload() -> None:
    body = ScheduleCreate.model_validate(
        schedule(
            cron=" 0  2 * * * ",
            jobTemplate={
                "type": "simulate",
                "payload": {"failureRate": 0.1, "seed": 3},
                "maxAttempts": 4,
                "retryPolicy": {"strategy": "fixed", "baseDelayMs": 250},
                "retryPolicyName": "slow-retries",
            },
        )
    )
    assert body.cron == "0 2 * * *"
    job, registry = body.job_template, Registry()
    checked = await check_payload(
        job.type, job.payload, prefix="jobTemplate.payload", identity=USER, types=registry
    )
    stored = job.stored(checked)
    assert registry.asked == [("simulate", "jobTemplate.payload")]  # the registry's owner
    assert stored["payload"] == {"failureRate": 0.1, "seed": 3}
    assert stored["retryPolicy"] == {"strategy": "fixed", "baseDelayMs": 250}
    assert (stored["type"], stored["priority"], stored["maxAttempts"]) == ("simulate", 2, 4)
    assert (stored["timeoutSeconds"], stored["retryPolicyName"]) == (30, "slow-retries")
    assert stored["queue"] == "acme"


async def test_a_custom_type_template_keeps_the_registry_queue_and_defaults() -> None:
    job = JobTemplate.model_validate(
        {"type": "acme.reverse", "priority": 2, "payload": {"text": "abc"}, "maxAttempts": 2}
    )
    registry = Registry()
    checked = await check_payload(
        job.type, job.payload, prefix="jobTemplate.payload", identity=USER, types=registry
    )
    stored = job.stored(checked)
    assert registry.asked == [("acme.reverse", "jobTemplate.payload")]
    assert (stored["queue"], stored["payload"]) == ("acme", {"text": "abc"})
    assert (stored["maxAttempts"], stored["timeoutSeconds"]) == (2, 30)  # own, then the type's


def test_registry_field_paths_move_under_the_callers_prefix() -> None:
    problem = ErrorDetail(field="payload.text", message="too long")
    assert moved_under(problem, "jobTemplate.payload").field == "jobTemplate.payload.text"
    assert moved_under(problem, "payload").field == "payload.text"
    unknown = ErrorDetail(field="type", message="unknown job type")
    assert moved_under(unknown, "jobTemplate.payload").field == "jobTemplate.type"
    assert moved_under(unknown, "payload").field == "type"


def test_a_bulk_selector_needs_at_least_one_field() -> None:
    with pytest.raises(ValidationError):
        BulkSelector.model_validate({})
    with pytest.raises(ValidationError):
        BulkSelector.model_validate({"ids": None, "fingerprint": None})
    with pytest.raises(ValidationError) as caught:
        BulkRequest.model_validate({"action": "explode", "selector": {"reason": "poison"}})
    assert "action" in error_fields(caught.value)
    request = BulkRequest.model_validate({"action": "discard", "selector": {"ids": []}})
    assert request.dry_run is False
    assert request.selector.as_json() == {"ids": []}


def test_selector_filters_apply_visibility_and_only_open_letters() -> None:
    selector = BulkSelector.model_validate(
        {
            "fingerprint": "ValueError: bad <n>",
            "jobType": "email",
            "createdFrom": "2024-01-01T00:00",
        }
    )
    requeue = selector.filters(Visibility("u@test.com"), action=BulkAction.REQUEUE)
    assert requeue.visibility.owner == "u@test.com"
    assert requeue.state.value == "open"
    assert requeue.job_status is not None and requeue.job_status.value == "dead"
    assert requeue.created.created_from is not None and requeue.created.created_from.tzinfo
    discard = selector.filters(Visibility(None), action=BulkAction.DISCARD)
    assert discard.job_status is None
    assert selector.as_json() == {
        "fingerprint": "ValueError: bad <n>",
        "jobType": "email",
        "createdFrom": "2024-01-01T00:00:00",
    }


def test_a_reversed_selector_range_is_422_on_the_selector() -> None:
    selector = BulkSelector.model_validate(
        {"createdFrom": "2024-02-01T00:00:00Z", "createdTo": "2024-01-01T00:00:00Z"}
    )
    with pytest.raises(ValidationFailed) as caught:
        selector.filters(Visibility(None), action=BulkAction.DISCARD)
    assert [d.field for d in caught.value.details] == ["selector.createdTo"]


def test_schedule_template_retry_policy_may_name_a_stored_policy() -> None:
    from jobs_dashboard.domain.schedules import JobTemplate

    template = JobTemplate.model_validate(
        {"type": "simulate", "priority": 1, "payload": {}, "retryPolicy": "gentle"}
    )
    assert (template.retry_policy, template.retry_policy_name) == (None, "gentle")
    with pytest.raises(ValueError):
        JobTemplate.model_validate(
            {
                "type": "simulate",
                "priority": 1,
                "payload": {},
                "retryPolicy": "a",
                "retryPolicyName": "b",
            }
        )


def test_the_default_policy_shown_is_the_one_an_unconfigured_scheduler_applies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``GET /api/retry-policies/defaults`` and the scheduler start from one set of defaults
    (``jobs_common.retry_defaults``), not two copies typed in by hand."""
    from dataclasses import asdict

    from jobs_scheduler.service import job_defaults
    from jobs_scheduler.settings import Settings as SchedulerSettings

    for name in [n for n in os.environ if n.startswith("SCHEDULER_")]:
        monkeypatch.delenv(name)
    applied = job_defaults(SchedulerSettings())
    shown = DEFAULT_POLICY.model_dump(exclude={"max_attempts"})
    assert shown == asdict(applied.retry_policy)
    assert applied.max_attempts == DEFAULT_MAX_ATTEMPTS
    assert applied.timeout_seconds == DEFAULT_TIMEOUT_SECONDS


@pytest.mark.parametrize("value", [7.872593960594942e-09, 1_700_000_000, "6.2e-63", "1700000000"])
def test_a_date_time_filter_is_iso_text_never_a_number(value: Any) -> None:
    with pytest.raises(ValidationError, match="ISO 8601 date-time, not a number"):
        BulkSelector.model_validate({"createdFrom": value})
    selector = BulkSelector.model_validate({"createdFrom": "2030-01-01T00:00:00Z"})
    assert selector.created_from is not None and selector.created_from.year == 2030
