"""Recording submitted jobs: idempotent multi-row insert, then the first move of each job.

A new job goes to ``blocked`` (it has parents), ``scheduled`` (it runs later) or ``queued``
(dispatched in the same transaction through the outbox).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import DateTime, Integer, SmallInteger, Text, func, select
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus, JobSubmitted, utcnow
from jobs_common.jobstore import batches, job_dependencies, jobs, retry_policies
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.jobs import DISPATCH_COLUMNS, JobDefaults
from jobs_scheduler.adapters.sql import ArrayRows, json_text
from jobs_scheduler.domain.retry import RetryPolicy

S = JobStatus

_ID = UUID(as_uuid=True)
NEW_JOBS = ArrayRows(
    "new_jobs",
    id=_ID,
    type=Text(),
    priority=SmallInteger(),
    payload=Text(),
    submitted_by=Text(),
    status=Text(),
    attempt=Integer(),
    max_attempts=Integer(),
    attempt_limit=Integer(),
    timeout_seconds=Integer(),
    retry_policy=Text(),
    run_at=DateTime(timezone=True),
    batch_id=_ID,
    schedule_id=_ID,
    trace_id=Text(),
    created_at=DateTime(timezone=True),
)
# Idempotent on the job id: a redelivered submission inserts nothing.
INSERT_JOBS = (
    NEW_JOBS.insert_into(jobs, json=("payload", "retry_policy"))
    .on_conflict_do_nothing(index_elements=[jobs.c.id])
    .returning(
        jobs.c.id,
        jobs.c.type,
        jobs.c.priority,
        jobs.c.payload,
        jobs.c.timeout_seconds,
        jobs.c.trace_id,
        jobs.c.status,
    )
)


async def _named_policies(
    connection: AsyncConnection, names: set[str]
) -> dict[str, dict[str, Any]]:
    if not names:
        return {}
    rows = await connection.execute(select(retry_policies).where(retry_policies.c.name.in_(names)))
    return {row.name: row._asdict() for row in rows}


def effective_policy(
    message: JobSubmitted, defaults: JobDefaults, named: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], int]:
    """The job's retry policy and max attempts: defaults < type defaults < named < inline."""
    policy = asdict(defaults.retry_policy) | defaults.retry_policy_by_type.get(message.job_type, {})
    attempts = defaults.max_attempts_by_type.get(message.job_type, defaults.max_attempts)
    stored = named.get(message.retry_policy_name or "")
    if stored is not None:
        policy |= {
            k: stored[k]
            for k in ("strategy", "base_delay_ms", "multiplier", "max_delay_ms", "jitter")
        }
        attempts = stored["max_attempts"] or attempts
    if message.retry_policy is not None:
        policy |= message.retry_policy.model_dump(exclude_none=True)
    RetryPolicy(**policy)  # fails loudly if a stored combination is unusable
    return policy, message.max_attempts or attempts


async def record_submissions(
    connection: AsyncConnection,
    changes: Changes,
    messages: Sequence[JobSubmitted],
    defaults: JobDefaults,
    *,
    schedule_id: Any = None,
) -> int:
    """Insert new jobs (idempotent on job id) and make each one's first move."""
    unique = sorted({m.job_id: m for m in messages}.values(), key=lambda m: m.job_id)
    if not unique:
        return 0
    named = await _named_policies(
        connection, {m.retry_policy_name for m in unique if m.retry_policy_name}
    )
    now = utcnow()
    rows = []
    for m in unique:
        policy, attempts = effective_policy(m, defaults, named)
        status = initial_status(m, now)
        rows.append(
            (
                m.job_id,
                m.job_type,
                m.priority,
                json_text(m.payload),
                m.submitted_by,
                status.value,
                1 if status is S.QUEUED else 0,
                attempts,
                attempts,
                min(m.timeout_seconds or defaults.timeout_seconds, defaults.max_timeout_seconds),
                json_text(policy),
                m.run_at,
                m.batch_id,
                schedule_id,
                m.trace_id,
                m.submitted_at,
            )
        )
    batch_rows = {
        m.batch_id: {"id": m.batch_id, "submitted_by": m.submitted_by, "total": m.batch_size or 1}
        for m in unique
        if m.batch_id is not None
    }
    if batch_rows:
        await connection.execute(
            insert(batches).on_conflict_do_nothing(), list(batch_rows.values())
        )
    inserted = {row.id: row for row in await connection.execute(INSERT_JOBS, NEW_JOBS.params(rows))}
    if not inserted:
        return 0
    dependencies = [
        {"job_id": m.job_id, "depends_on": parent}
        for m in unique
        if m.job_id in inserted
        for parent in dict.fromkeys(m.depends_on)
    ]
    if dependencies:
        await connection.execute(insert(job_dependencies).on_conflict_do_nothing(), dependencies)
    for m in unique:
        job = inserted.get(m.job_id)
        if job is None:
            continue
        reason = "submitted"
        if m.retry_policy_name and m.retry_policy_name not in named:
            reason += f"; retry policy {m.retry_policy_name!r} unknown, defaults used"
        changes.move(m.job_id, 0, None, S.PENDING, reason)
        status = S(job.status)
        if status is S.BLOCKED:
            changes.move(
                m.job_id,
                0,
                S.PENDING,
                S.BLOCKED,
                f"waiting for {len(set(m.depends_on))} parent job(s)",
            )
        elif status is S.SCHEDULED:
            assert m.run_at is not None
            changes.move(m.job_id, 0, S.PENDING, S.SCHEDULED, f"runs at {m.run_at.isoformat()}")
        else:
            changes.move(m.job_id, 1, S.PENDING, S.QUEUED, "dispatched")
            changes.dispatch(job, attempt=1, new_attempt=True)
    return len(inserted)


def initial_status(message: JobSubmitted, now: Any) -> JobStatus:
    if message.depends_on:
        return S.BLOCKED
    if message.run_at is not None and message.run_at > now:
        return S.SCHEDULED
    return S.QUEUED


async def dispatch_first_attempt(
    connection: AsyncConnection,
    changes: Changes,
    job_id: Any,
    current: S,
    reason: str = "dispatched",
) -> None:
    """``current -> queued`` with the next attempt number, dispatched through the outbox."""
    job = (
        await connection.execute(
            jobs.update()
            .where(jobs.c.id == job_id)
            .values(
                status=S.QUEUED.value,
                attempt=jobs.c.attempt + 1,
                run_at=None,
                updated_at=func.now(),
            )
            .returning(*DISPATCH_COLUMNS)
        )
    ).one()
    changes.move(job_id, job.attempt, current, S.QUEUED, reason)
    changes.dispatch(job, attempt=job.attempt, new_attempt=True)
