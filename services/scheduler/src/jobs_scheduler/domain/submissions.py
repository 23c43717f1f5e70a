"""What a submitted job starts with: its effective retry policy, max attempts, first status."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from jobs_common.contracts import JobStatus, JobSubmitted
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.retry import RetryPolicy

S = JobStatus
POLICY_FIELDS = ("strategy", "base_delay_ms", "multiplier", "max_delay_ms", "jitter")


NamedPolicies = dict[tuple[uuid.UUID | None, str], dict[str, Any]]
"""Stored retry policies by (project, name); project None: shared by every project."""


def named_policy(message: JobSubmitted, named: NamedPolicies) -> dict[str, Any] | None:
    """The stored policy a job names: its project's, else a shared one; None when neither."""
    if not message.retry_policy_name:
        return None
    name = message.retry_policy_name
    return named.get((message.project(), name)) or named.get((None, name))


def effective_policy(
    message: JobSubmitted, defaults: JobDefaults, named: NamedPolicies
) -> tuple[dict[str, Any], int]:
    """The job's retry policy and max attempts, each field from the first that sets it:
    inline fields > the named policy (:func:`named_policy`) > the job type's
    defaults > the global defaults. Max attempts: the job's own > the named policy's > the
    type's > the global default. An unknown name is ignored (the caller says so in the
    job's timeline); a combination :class:`RetryPolicy` refuses raises."""
    policy = asdict(defaults.retry_policy) | defaults.retry_policy_by_type.get(message.job_type, {})
    attempts = defaults.max_attempts_by_type.get(message.job_type, defaults.max_attempts)
    stored = named_policy(message, named)
    if stored is not None:
        policy |= {k: stored[k] for k in POLICY_FIELDS}
        attempts = stored["max_attempts"] or attempts
    if message.retry_policy is not None:
        policy |= message.retry_policy.model_dump(exclude_none=True)
    RetryPolicy(**policy)  # fails loudly if a stored combination is unusable
    return policy, message.max_attempts or attempts


def initial_status(*, has_parents: bool, run_at: datetime | None, now: datetime) -> JobStatus:
    """``blocked`` until its parents end, ``scheduled`` when it runs later, else ``queued``
    (dispatched at once)."""
    if has_parents:
        return S.BLOCKED
    if run_at is not None and run_at > now:
        return S.SCHEDULED
    return S.QUEUED


def first_attempt(status: JobStatus) -> int:
    """The attempt number a new job is recorded with: 1 when dispatched at once, else 0
    (the attempt is numbered when it is dispatched)."""
    return 1 if status is S.QUEUED else 0


@dataclass(frozen=True)
class QueueDefaults:
    """What a queue gives its jobs that name none (docs/flow-control.md, "A queue")."""

    timeout_seconds: int | None = None
    retry_policy: str | None = None
    priority: int | None = None


def with_queue_defaults(job: JobSubmitted, defaults: QueueDefaults) -> JobSubmitted:
    """``job`` with its queue's defaults where it names none (docs/flow-control.md): the
    priority, the timeout, and the retry policy (by name) when it has neither a policy nor a
    name."""
    update: dict[str, object] = {}
    if job.priority_default and defaults.priority is not None:
        update["priority"] = defaults.priority
    if (job.timeout_seconds is None or job.timeout_default) and defaults.timeout_seconds:
        update["timeout_seconds"] = defaults.timeout_seconds
    if job.retry_policy is None and job.retry_policy_name is None and defaults.retry_policy:
        update["retry_policy_name"] = defaults.retry_policy
    return job.model_copy(update=update) if update else job
