"""The scheduler's decisions (``domain/``), each against a table written out by hand: the
expected values are not computed from the code under test."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobs_common.contracts import ErrorKind, JobStatus, JobSubmitted, RetryPolicySpec
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.failures import after_failure, stopped_attempt
from jobs_scheduler.domain.leases import after_lease_lost, listed_attempt
from jobs_scheduler.domain.ready_messages import after_dead_lettered
from jobs_scheduler.domain.retry import RetryPolicy
from jobs_scheduler.domain.submissions import (
    NamedPolicies,
    effective_policy,
    first_attempt,
    initial_status,
    named_policy,
)

pytestmark = pytest.mark.unit

R, P, T = ErrorKind.RETRYABLE, ErrorKind.PERMANENT, ErrorKind.TIMEOUT

# kind, attempt, attempt limit, error class, cancel asked, lease lost -> action, reason
FAILURE_POLICY = [
    (R, 1, 3, "Boom", False, False, "retry", "retry_scheduled"),
    (R, 2, 3, "Boom", False, False, "retry", "retry_scheduled"),
    (R, 3, 3, "Boom", False, False, "dead", "max_attempts"),
    (R, 4, 3, "Boom", False, False, "dead", "max_attempts"),  # past the limit
    (R, 1, 1, "Boom", False, False, "dead", "max_attempts"),  # max_attempts=1: no retry
    (R, 5, 7, "Boom", False, False, "retry", "retry_scheduled"),  # a manual retry's budget
    (T, 1, 3, "AttemptTimedOut", False, False, "retry", "retry_scheduled"),
    (T, 3, 3, "AttemptTimedOut", False, False, "dead", "max_attempts"),
    (R, 1, 3, "LeaseExpired", False, True, "retry", "retry_scheduled"),
    (R, 3, 3, "LeaseExpired", False, True, "dead", "lease_expired"),
    (P, 1, 3, "ValueError", False, False, "dead", "permanent_error"),
    (P, 3, 3, "ValueError", False, False, "dead", "permanent_error"),  # not "max_attempts"
    (P, 1, 3, "InvalidPayload", False, False, "dead", "unprocessable"),
    (P, 1, 3, "UnknownJobType", False, False, "dead", "unprocessable"),
    (R, 1, 3, "InvalidPayload", False, False, "retry", "retry_scheduled"),  # only if permanent
    (R, 1, 3, "Boom", True, False, "cancelled", "cancelled"),
    (R, 3, 3, "Boom", True, False, "cancelled", "cancelled"),
    (P, 1, 3, "InvalidPayload", True, False, "cancelled", "cancelled"),
    (T, 3, 3, "AttemptTimedOut", True, False, "cancelled", "cancelled"),
    (R, 3, 3, "LeaseExpired", True, True, "cancelled", "cancelled"),
]


@pytest.mark.parametrize(
    ("kind", "attempt", "limit", "error_class", "cancel", "lease_lost", "action", "reason"),
    FAILURE_POLICY,
)
def test_failure_policy(
    kind: ErrorKind,
    attempt: int,
    limit: int,
    error_class: str,
    cancel: bool,
    lease_lost: bool,
    action: str,
    reason: str,
) -> None:
    decision = after_failure(
        kind=kind,
        attempt=attempt,
        attempt_limit=limit,
        error_class=error_class,
        cancel_requested=cancel,
        lease_lost=lease_lost,
    )
    assert (decision.action, decision.reason) == (action, reason)


# lost before, worker silent, threshold, cancel asked -> lost after, poison
POISON_THRESHOLD = [
    (0, True, 3, False, 1, False),
    (1, True, 3, False, 2, False),
    (2, True, 3, False, 3, True),
    (3, True, 3, False, 4, True),
    (2, False, 3, False, 2, False),  # a live worker stopped listing it: not counted
    (5, False, 3, False, 5, False),
    (2, True, 3, True, 3, False),  # cancel asked: counted, but the failure policy cancels
    (0, True, 1, False, 1, True),
    (0, False, 1, False, 0, False),
]


@pytest.mark.parametrize(
    ("lost", "silent", "threshold", "cancel", "lost_after", "poison"), POISON_THRESHOLD
)
def test_poison_threshold(
    lost: int, silent: bool, threshold: int, cancel: bool, lost_after: int, poison: bool
) -> None:
    loss = after_lease_lost(
        lost_count=lost, silent=silent, threshold=threshold, cancel_requested=cancel
    )
    assert (loss.lost_count, loss.poison) == (lost_after, poison)


# ready messages dead before this one, limit -> action
TTL_REDISPATCH_LIMIT = [
    (0, 1440, "redispatch"),
    (1439, 1440, "redispatch"),
    (1440, 1440, "dead"),
    (1441, 1440, "dead"),
    (0, 1, "redispatch"),
    (1, 1, "dead"),
    (0, 0, "dead"),
]


# A heartbeat of worker "w" lists attempt 2; its renewal did not match the row read after it:
# row status, row attempt, row worker, the worker whose result ended attempt 2 -> verdict.
LISTED_ATTEMPT = [
    ("queued", 2, None, None, "start"),  # JobRunning not applied yet (heartbeat read first)
    ("running", 2, "w", None, "held"),  # its start committed between the renewal and the read
    ("running", 2, "other", None, "lost"),  # taken over after a redelivery
    ("running", 3, "w", None, "lost"),  # the store moved to the next attempt
    ("queued", 3, None, None, "lost"),  # re-dispatched: the next attempt waits
    ("scheduled", 2, "w", None, "lost"),  # failed, waiting for its retry
    ("succeeded", 2, "w", "w", "reported"),  # its own result, read before this heartbeat
    ("scheduled", 2, "w", "w", "reported"),  # its own failure, retry waiting
    ("running", 3, "x", "w", "reported"),  # its own failure, the retry runs elsewhere
    ("succeeded", 2, "other", "other", "lost"),  # taken over, ended by the other worker
    ("cancelled", 2, "w", None, "lost"),  # the scheduler ended it (it told the worker too)
    (None, None, None, None, "lost"),  # no such job
]


@pytest.mark.parametrize(("status", "attempt", "holder", "reporter", "verdict"), LISTED_ATTEMPT)
def test_an_attempt_is_lost_only_when_the_store_moved_on(
    status: str | None, attempt: int | None, holder: str | None, reporter: str | None, verdict: str
) -> None:
    assert (
        listed_attempt(
            attempt=2,
            worker_id="w",
            status=status,
            current_attempt=attempt,
            holder=holder,
            reported_by=reporter,
        )
        == verdict
    )


def test_an_attempt_the_platform_stopped_is_retryable_never_permanent() -> None:
    stopped = stopped_attempt("lease lost")
    assert (stopped.kind, stopped.error_class) == (ErrorKind.RETRYABLE, "AttemptStopped")
    assert "lease lost" in stopped.error
    decision = after_failure(
        kind=stopped.kind,
        attempt=1,
        attempt_limit=3,
        error_class=stopped.error_class,
        cancel_requested=False,
        lease_lost=True,
    )
    assert (decision.action, decision.reason) == ("retry", "retry_scheduled")


@pytest.mark.parametrize(("expired", "limit", "action"), TTL_REDISPATCH_LIMIT)
def test_ttl_redispatch_limit(expired: int, limit: int, action: str) -> None:
    assert after_dead_lettered(expired_count=expired, limit=limit) == action


DEFAULTS = JobDefaults(
    max_attempts=3,
    timeout_seconds=300,
    max_timeout_seconds=1700,
    timeout_grace_seconds=10,
    retry_policy=RetryPolicy(),  # exponential, 1000 ms, x2, max 60000 ms, jitter
    ttl_redispatch_limit=10,
    max_attempts_by_type={"email": 5},
    retry_policy_by_type={"email": {"strategy": "fixed", "base_delay_ms": 30_000}},
)
NAMED: NamedPolicies = {
    (None, "gentle"): {
        "name": "gentle",
        "strategy": "linear",
        "base_delay_ms": 2000,
        "multiplier": 1.0,
        "max_delay_ms": 9000,
        "jitter": False,
        "max_attempts": 7,
    },
    (None, "open"): {
        "name": "open",
        "strategy": "exponential",
        "base_delay_ms": 500,
        "multiplier": 3.0,
        "max_delay_ms": 120_000,
        "jitter": True,
        "max_attempts": None,
    },
}

# type, policy name, inline fields, max attempts ->
#   strategy, base delay, multiplier, max delay, jitter, max attempts
EFFECTIVE_POLICY = [
    ("simulate", None, None, None, "exponential", 1000, 2.0, 60_000, True, 3),
    ("email", None, None, None, "fixed", 30_000, 2.0, 60_000, True, 5),
    ("email", "gentle", None, None, "linear", 2000, 1.0, 9000, False, 7),
    ("simulate", "gentle", {"multiplier": 3}, 2, "linear", 2000, 3, 9000, False, 2),
    ("simulate", "missing", None, None, "exponential", 1000, 2.0, 60_000, True, 3),
    ("email", "missing", None, None, "fixed", 30_000, 2.0, 60_000, True, 5),
    ("email", "open", None, None, "exponential", 500, 3.0, 120_000, True, 5),
    (
        "simulate",
        None,
        {"strategy": "fixed", "base_delay_ms": 250},
        None,
        "fixed",
        250,
        2.0,
        60_000,
        True,
        3,
    ),
    ("email", None, {"jitter": False}, 9, "fixed", 30_000, 2.0, 60_000, False, 9),
    ("email", "gentle", {"max_delay_ms": 4000}, None, "linear", 2000, 1.0, 4000, False, 7),
]


def submission(**fields: Any) -> JobSubmitted:
    base: dict[str, Any] = {
        "job_id": uuid.uuid4(),
        "job_type": "simulate",
        "priority": 1,
        "payload": {},
        "submitted_by": "u@test.com",
        "submitted_at": datetime(2026, 1, 1, tzinfo=UTC),
    }
    return JobSubmitted(**(base | fields))


@pytest.mark.parametrize(
    (
        "job_type",
        "name",
        "inline",
        "max_attempts",
        "strategy",
        "base",
        "multiplier",
        "max_delay",
        "jitter",
        "attempts",
    ),
    EFFECTIVE_POLICY,
)
def test_effective_retry_policy(
    job_type: str,
    name: str | None,
    inline: dict[str, Any] | None,
    max_attempts: int | None,
    strategy: str,
    base: int,
    multiplier: float,
    max_delay: int,
    jitter: bool,
    attempts: int,
) -> None:
    message = submission(
        job_type=job_type,
        retry_policy_name=name,
        retry_policy=RetryPolicySpec(**inline) if inline else None,
        max_attempts=max_attempts,
    )
    policy, effective_attempts = effective_policy(message, DEFAULTS, NAMED)
    assert policy == {
        "strategy": strategy,
        "base_delay_ms": base,
        "multiplier": multiplier,
        "max_delay_ms": max_delay,
        "jitter": jitter,
    }
    assert effective_attempts == attempts


def test_a_projects_own_policy_comes_before_a_shared_one_of_its_name() -> None:
    """A job names a policy within its project, else a shared one; never another project's."""
    mine, theirs = uuid.uuid4(), uuid.uuid4()
    own = NAMED[(None, "gentle")] | {"base_delay_ms": 7000, "max_delay_ms": 7000}
    other = NAMED[(None, "gentle")] | {"base_delay_ms": 1, "max_delay_ms": 1}
    named = NAMED | {(mine, "gentle"): own, (theirs, "gentle"): other, (theirs, "only"): other}
    in_mine = submission(retry_policy_name="gentle").model_copy(update={"project_id": mine})
    assert named_policy(in_mine, named) is own
    assert effective_policy(in_mine, DEFAULTS, named)[0]["base_delay_ms"] == 7000
    elsewhere = in_mine.model_copy(update={"project_id": uuid.uuid4()})
    assert named_policy(elsewhere, named) is NAMED[(None, "gentle")]
    only_theirs = in_mine.model_copy(update={"retry_policy_name": "only"})
    assert named_policy(only_theirs, named) is None


def test_an_unusable_configured_policy_fails_loudly() -> None:
    broken = JobDefaults(
        max_attempts=3,
        timeout_seconds=300,
        max_timeout_seconds=1700,
        timeout_grace_seconds=10,
        retry_policy=RetryPolicy(),
        ttl_redispatch_limit=10,
        retry_policy_by_type={"simulate": {"delay": 5}},
    )
    with pytest.raises(TypeError):
        effective_policy(submission(), broken, {})


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
S = JobStatus

# has parents, run_at -> initial status, first attempt number
INITIAL_STATUS = [
    (False, None, S.QUEUED, 1),
    (False, NOW - timedelta(seconds=1), S.QUEUED, 1),
    (False, NOW, S.QUEUED, 1),  # due now: not later
    (False, NOW + timedelta(seconds=1), S.SCHEDULED, 0),
    (True, None, S.BLOCKED, 0),
    (True, NOW - timedelta(seconds=1), S.BLOCKED, 0),
    (True, NOW + timedelta(hours=1), S.BLOCKED, 0),  # parents first, then the time
]


@pytest.mark.parametrize(("parents", "run_at", "status", "attempt"), INITIAL_STATUS)
def test_initial_status(
    parents: bool, run_at: datetime | None, status: JobStatus, attempt: int
) -> None:
    initial = initial_status(has_parents=parents, run_at=run_at, now=NOW)
    assert initial is status
    assert first_attempt(initial) == attempt
