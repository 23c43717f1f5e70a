"""Running a schedule now: one fire outside its cron, made the way a cron tick makes one.

The job comes from the schedule's template (same type, payload, project, owner, priority,
limits and retry policy: ``app/cron.job_from_template``), is recorded in ``schedule_fires`` at
the database's now and in ``jobs`` with the schedule's id, in one transaction. The next fire
time stays where the cron put it. The job's id derives from the schedule and the caller's
Idempotency-Key, and the schedule's row is locked first, so the same key twice (a double
click, a retried request) runs it once and answers the first run again."""

from __future__ import annotations

import logging
import uuid

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.errors import Conflict
from jobs_common.schedule_commands import ScheduleRun
from jobs_common.tenancy import Scope
from jobs_scheduler.adapters import jobs, schedules
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.cron import FIRE_NAMESPACE, job_from_template
from jobs_scheduler.app.recording import record_submissions
from jobs_scheduler.domain.defaults import JobDefaults

log = logging.getLogger(__name__)


def run_job_id(schedule_id: uuid.UUID, key: str) -> uuid.UUID:
    return uuid.uuid5(FIRE_NAMESPACE, f"{schedule_id}/run-now/{key}")


async def run_now(
    connection: AsyncConnection,
    changes: Changes,
    *,
    schedule_id: uuid.UUID,
    scope: Scope,
    key: str,
    defaults: JobDefaults,
) -> ScheduleRun | None:
    """The run's job (recorded), or the earlier run of the same ``key``; None if the schedule
    is not found. Raises Conflict when its template cannot make a job."""
    schedule = await schedules.lock_one(connection, schedule_id, scope)
    if schedule is None:
        return None
    job_id = run_job_id(schedule.id, key)
    earlier = await schedules.fire_of_job(connection, schedule.id, job_id)
    if earlier is not None:
        return ScheduleRun(schedule_id=schedule.id, job_id=job_id, fire_time=earlier, replayed=True)
    now = await jobs.database_now(connection)
    try:
        message = job_from_template(schedule, now, job_id)
    except (ValidationError, KeyError, ValueError) as exc:
        raise Conflict(f"schedule {schedule.name!r} cannot make a job: {exc}") from exc
    if not await schedules.record_fire(connection, schedule.id, now, job_id):
        raise Conflict("the schedule fired at this very moment; run it again")
    await record_submissions(connection, changes, [message], defaults, schedule_id=schedule.id)
    await schedules.note_run(connection, schedule.id, fired_at=now, job_id=job_id)
    log.info(
        "schedule run now",
        extra={
            "action": "schedule_run_now",
            "schedule_id": str(schedule.id),
            "job_id": str(job_id),
        },
    )
    return ScheduleRun(schedule_id=schedule.id, job_id=job_id, fire_time=now, replayed=False)
