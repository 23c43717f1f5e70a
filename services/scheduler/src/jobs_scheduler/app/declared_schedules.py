"""Schedules declared in code (``WorkerSchedules`` on ``jobs.schedules``): each worker sends
what its handlers declare with every announcement of its types, so the same declarations
arrive again and again, from every replica. Each is created or updated by name in one
statement that writes nothing when nothing changed; a declaration the scheduler cannot use
(cron, time zone) is logged and skipped, the others still applied."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import DeclaredSchedule, WorkerSchedules, utcnow
from jobs_common.schedule_commands import CODE_OWNER
from jobs_scheduler.adapters import schedules
from jobs_scheduler.domain.schedules import declared_row

log = logging.getLogger(__name__)


async def apply_declared(
    connection: AsyncConnection, messages: Sequence[WorkerSchedules]
) -> Counter[str]:
    """Apply a batch of announcements, in (project, name) order: two replicas applying
    batches that name the same schedules lock their rows in one order."""
    now = utcnow()
    outcomes: Counter[str] = Counter()
    items = sorted(
        ((m, d) for m in messages for d in m.schedules),
        key=lambda item: (str(item[0].project_id), item[1].name),
    )
    for message, declared in items:
        outcomes[await _apply_one(connection, message, declared, now)] += 1
    return outcomes


async def _apply_one(
    connection: AsyncConnection, message: WorkerSchedules, declared: DeclaredSchedule, now: datetime
) -> str:
    fields = {
        "schedule": declared.name,
        "project_id": str(message.project_id),
        "declared_in": declared.declared_in,
        "worker_id": message.worker_id,
    }
    try:
        cron, timezone, template = declared_row(declared)
    except ValueError as exc:
        log.warning(
            "declared schedule refused: %s",
            exc,
            extra={"action": "declared_schedule_refused", **fields},
        )
        return "refused"
    outcome = await schedules.upsert_declared(
        connection,
        project_id=message.project_id,
        name=declared.name,
        cron=cron,
        timezone=timezone,
        job_template=template,
        declared_in=declared.declared_in,
        owner=CODE_OWNER,
        now=now,
    )
    if outcome != "unchanged":
        log.info("declared schedule %s", outcome, extra={"action": f"schedule_{outcome}", **fields})
    return outcome
