"""Recording submitted jobs: each new job's effective retry policy and attempts, its timeout
and its first status (``blocked``: it has parents; ``scheduled``: it runs later; ``queued``:
dispatched in the same transaction through the outbox; ``domain/submissions.py`` decides),
inserted idempotently (``adapters/recording.py``), then its first moves recorded and its
first attempt dispatched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus, JobSubmitted, utcnow
from jobs_scheduler.adapters import project_queues, recording
from jobs_scheduler.adapters.set_based import json_text
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import record_creation
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.submissions import (
    effective_policy,
    first_attempt,
    initial_status,
    named_policy,
    with_queue_defaults,
)

S = JobStatus


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
    # Each job's queue exists (created with no limits on first use) and gives its defaults.
    queue_defaults = await project_queues.ensure(
        connection, {(m.project(), m.queue) for m in unique}
    )
    unique = [with_queue_defaults(m, queue_defaults[(m.project(), m.queue)]) for m in unique]
    named = await recording.named_policies(
        connection, {(m.project(), m.retry_policy_name) for m in unique if m.retry_policy_name}
    )
    now = utcnow()
    rows = []
    for m in unique:
        policy, attempts = effective_policy(m, defaults, named)
        status = initial_status(has_parents=bool(m.depends_on), run_at=m.run_at, now=now)
        rows.append(
            (
                m.job_id,
                m.job_type,
                m.priority,
                json_text(m.payload),
                m.submitted_by,
                m.project(),
                status.value,
                first_attempt(status),
                attempts,
                attempts,
                min(m.timeout_seconds or defaults.timeout_seconds, defaults.max_timeout_seconds),
                json_text(policy),
                m.run_at,
                m.batch_id,
                schedule_id,
                m.trace_id,
                m.submitted_at,
                m.queue,
                m.ref,
                bool(m.depends_on),
            )
        )
    batch_rows = {
        m.batch_id: {
            "id": m.batch_id,
            "submitted_by": m.submitted_by,
            "project_id": m.project(),
            "total": m.batch_size or 1,
        }
        for m in unique
        if m.batch_id is not None
    }
    await recording.insert_batches(connection, list(batch_rows.values()))
    inserted = await recording.insert_jobs(connection, rows)
    if not inserted:
        return 0
    dependencies = [
        {"job_id": m.job_id, "depends_on": parent}
        for m in unique
        if m.job_id in inserted
        for parent in dict.fromkeys(m.depends_on)
    ]
    await recording.insert_dependencies(connection, dependencies)
    for m in unique:
        job = inserted.get(m.job_id)
        if job is None:
            continue
        reason = "submitted" if m.api_key is None else f"submitted with API key {m.api_key}"
        if m.retry_policy_name and named_policy(m, named) is None:
            reason += f"; retry policy {m.retry_policy_name!r} unknown, defaults used"
        status = S(job.status)
        if status is S.BLOCKED:
            why = f"waiting for {len(set(m.depends_on))} parent job(s)"
        elif status is S.SCHEDULED:
            assert m.run_at is not None
            why = f"runs at {m.run_at.isoformat()}"
        else:
            why = "dispatched"
        record_creation(
            changes,
            m.job_id,
            status,
            attempt=first_attempt(status),
            submitted=reason,
            reason=why,
            job_type=m.job_type,
            submitted_by=m.submitted_by,
            trace_id=m.trace_id,
            project_id=m.project(),
        )
        if status is S.QUEUED:
            changes.dispatch(job, attempt=1, new_attempt=True, clock_started=True)
    return len(inserted)
