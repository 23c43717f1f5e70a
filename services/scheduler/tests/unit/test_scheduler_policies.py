import uuid

import pytest

from jobs_common.contracts import JobSubmitted, RetryPolicySpec, utcnow
from jobs_scheduler.adapters.jobs import JobDefaults
from jobs_scheduler.adapters.recording import effective_policy
from jobs_scheduler.domain.retry import RetryPolicy

pytestmark = pytest.mark.unit

DEFAULTS = JobDefaults(
    max_attempts=3,
    timeout_seconds=300,
    max_timeout_seconds=1700,
    timeout_grace_seconds=10,
    retry_policy=RetryPolicy(),
    ttl_redispatch_limit=10,
    max_attempts_by_type={"email": 5},
    retry_policy_by_type={"email": {"strategy": "fixed", "base_delay_ms": 30_000}},
)
NAMED = {
    "gentle": {
        "name": "gentle",
        "strategy": "linear",
        "base_delay_ms": 2000,
        "multiplier": 1.0,
        "max_delay_ms": 9000,
        "jitter": False,
        "max_attempts": 7,
    }
}


def job(**fields: object) -> JobSubmitted:
    base: dict[str, object] = {
        "job_id": uuid.uuid4(),
        "job_type": "simulate",
        "priority": 1,
        "payload": {},
        "submitted_by": "u@test.com",
        "submitted_at": utcnow(),
    }
    return JobSubmitted(**(base | fields))


def test_configured_defaults_apply_when_the_job_says_nothing() -> None:
    policy, attempts = effective_policy(job(), DEFAULTS, NAMED)
    assert (policy["strategy"], policy["base_delay_ms"], attempts) == ("exponential", 1000, 3)


def test_per_type_defaults_override_the_global_ones() -> None:
    policy, attempts = effective_policy(job(job_type="email"), DEFAULTS, NAMED)
    assert (policy["strategy"], policy["base_delay_ms"], attempts) == ("fixed", 30_000, 5)


def test_a_named_policy_overrides_type_defaults_and_brings_its_attempts() -> None:
    policy, attempts = effective_policy(
        job(job_type="email", retry_policy_name="gentle"), DEFAULTS, NAMED
    )
    assert (policy["strategy"], policy["max_delay_ms"], attempts) == ("linear", 9000, 7)


def test_inline_fields_win_and_explicit_max_attempts_wins() -> None:
    policy, attempts = effective_policy(
        job(retry_policy_name="gentle", retry_policy=RetryPolicySpec(multiplier=3), max_attempts=2),
        DEFAULTS,
        NAMED,
    )
    assert (policy["strategy"], policy["multiplier"], attempts) == ("linear", 3, 2)


def test_an_unknown_policy_name_falls_back_to_the_defaults() -> None:
    policy, attempts = effective_policy(job(retry_policy_name="missing"), DEFAULTS, NAMED)
    assert (policy["strategy"], attempts) == ("exponential", 3)
