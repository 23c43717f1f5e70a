"""Promotion: scheduled jobs whose time has come (delays, retry backoffs, paced requeues) are
dispatched under their next attempt. Safe with several replicas (``FOR UPDATE SKIP LOCKED``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobStatus
from jobs_scheduler.adapters import jobs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition

S = JobStatus


async def promote_due(connection: AsyncConnection, changes: Changes, limit: int) -> int:
    """Dispatch up to ``limit`` scheduled jobs whose time has come. Returns how many."""
    due = await jobs.lock_due_scheduled(connection, limit)
    return await jobs.dispatch_next_attempts(
        connection, changes, [Transition(job_id, S.SCHEDULED, S.QUEUED, "due") for job_id in due]
    )
