"""Firing cron schedules: each fire time creates exactly one job across all replicas.

A due schedule row is locked with ``SKIP LOCKED``; the fire is recorded in
``schedule_fires`` (unique ``(schedule_id, fire_time)``) together with the job, whose id is
derived from the schedule and fire time, so even a replay of the same fire inserts nothing.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobSubmitted, RetryPolicySpec
from jobs_common.topology import DEFAULT_QUEUE
from jobs_scheduler.adapters import jobs, schedules
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.recording import record_submissions
from jobs_scheduler.domain.cron import due_firing
from jobs_scheduler.domain.defaults import JobDefaults

log = logging.getLogger(__name__)
FIRE_NAMESPACE = uuid.UUID("5f0c1c8e-3d61-4d1c-9a43-6c1e2f4b7a10")


def fire_job_id(schedule_id: uuid.UUID, fire_time: datetime) -> uuid.UUID:
    return uuid.uuid5(FIRE_NAMESPACE, f"{schedule_id}/{fire_time.isoformat()}")


def job_from_template(
    schedule: Any, fire_time: datetime, job_id: uuid.UUID | None = None
) -> JobSubmitted:
    """The job a fire at ``fire_time`` creates (``job_id``: a run now's; default the fire's)."""
    template: dict[str, Any] = schedule.job_template
    policy = template.get("retryPolicy")
    return JobSubmitted(
        job_id=job_id or fire_job_id(schedule.id, fire_time),
        job_type=template["type"],
        priority=int(template.get("priority", 2)),
        # A schedule declared in code naming no priority: its queue's default, when it has one.
        priority_default=bool(template.get("priorityDefault")),
        payload=template.get("payload") or {},
        submitted_by=schedule.owner,
        project_id=schedule.project_id,
        max_attempts=template.get("maxAttempts"),
        timeout_seconds=template.get("timeoutSeconds"),
        submitted_at=fire_time,
        retry_policy=RetryPolicySpec.model_validate(policy) if policy else None,
        retry_policy_name=template.get("retryPolicyName"),
        # A custom type's named queue, as the registry said when the schedule was created.
        queue=template.get("queue") or DEFAULT_QUEUE,
    )


async def fire_due_schedules(
    connection: AsyncConnection, changes: Changes, limit: int, defaults: JobDefaults
) -> int:
    now = await jobs.database_now(connection)
    fired = 0
    for schedule in await schedules.lock_due(connection, limit, now):
        try:  # a schedule the scheduler cannot read is paused, never retried on every tick
            firing = due_firing(schedule.cron, schedule.timezone, schedule.next_fire_at, now)
            message = job_from_template(schedule, firing.fire_time)
        except (ValidationError, KeyError, ValueError):
            log.exception(
                "schedule unusable (cron, time zone or template); paused",
                extra={"action": "schedule_paused", "schedule_id": str(schedule.id)},
            )
            await schedules.pause_unusable(connection, schedule.id)
            continue
        if await schedules.record_fire(connection, schedule.id, firing.fire_time, message.job_id):
            await record_submissions(
                connection, changes, [message], defaults, schedule_id=schedule.id
            )
            fired += 1
            if firing.missed:
                log.warning(
                    "missed fire times skipped after downtime",
                    extra={
                        "action": "schedule_missed",
                        "schedule_id": str(schedule.id),
                        "missed": firing.missed,
                    },
                )
        await schedules.advance(
            connection,
            schedule.id,
            fired_at=firing.fire_time,
            next_fire_at=firing.next_fire_at,
            job_id=message.job_id,
        )
    return fired
