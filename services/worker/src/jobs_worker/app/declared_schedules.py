"""Schedules the handlers declare in code (``@handler(..., schedules=[Cron(...)])``), sent to
the scheduler on ``jobs.schedules`` for the project ``WORKER_SCHEDULES_PROJECT`` names.

They are checked when the worker starts, as a schedule made through the API is: the cron
expression, the time zone and the payload against the handler's own payload model; a worker
whose declarations do not pass refuses to start. They are sent once at start, then again with
every announcement of the worker's types (``WORKER_TYPES_INTERVAL``): the scheduler writes
nothing when nothing changed, so a lost or unconfirmed message is made good by the next one,
and every replica may send the same. No credentials are needed beyond the broker's.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter

from jobs_common.contracts import DeclaredSchedule, WorkerSchedules, utcnow
from jobs_common.cron import check_cron, check_timezone
from jobs_common.rabbit import Publisher
from jobs_common.topology import SCHEDULES
from jobs_sdk.context import HandlerSpec, Registry

log = logging.getLogger(__name__)

PROJECT_SETTING = "WORKER_SCHEDULES_PROJECT"


class ScheduleDeclarationError(ValueError):
    """A declared schedule that no fire could run; the worker does not start with it."""


def declared_schedules(registry: Registry) -> list[DeclaredSchedule]:
    """Every schedule of the registry's handlers, checked; raises ScheduleDeclarationError."""
    declared = [
        _declared(spec, cron_index)
        for spec in sorted(registry.values(), key=lambda s: s.job_type)
        for cron_index in range(len(spec.schedules))
    ]
    names = Counter(d.name for d in declared)
    if twice := sorted(name for name, count in names.items() if count > 1):
        raise ScheduleDeclarationError(
            f"schedule names declared by more than one handler: {', '.join(twice)}; a name "
            "is one schedule of the project (give each Cron its own name=)"
        )
    return declared


def _declared(spec: HandlerSpec, index: int) -> DeclaredSchedule:
    cron = spec.schedules[index]
    name = cron.schedule_name(spec.job_type)
    try:
        expression = check_cron(cron.expression)
        check_timezone(cron.timezone)
        payload = spec.payload_model.model_validate(cron.payload_json())
    except ValueError as exc:  # pydantic's ValidationError is one
        raise ScheduleDeclarationError(
            f"schedule {name!r} of {spec.job_type!r} ({spec.module}): {exc}"
        ) from exc
    return DeclaredSchedule(
        name=name,
        cron=expression,
        timezone=cron.timezone,
        job_type=spec.job_type,
        payload=payload.model_dump(mode="json", by_alias=True),
        priority=cron.priority,
        queue=spec.queue,
        max_attempts=spec.max_attempts,
        timeout_seconds=spec.timeout_seconds,
        declared_in=spec.module or spec.job_type,
    )


class ScheduleDeclarer:
    """Sends the declarations at start and every ``interval`` while the worker runs."""

    def __init__(
        self,
        *,
        publisher: Publisher,
        worker_id: str,
        project_id: uuid.UUID | None,
        schedules: list[DeclaredSchedule],
        interval: float,
    ) -> None:
        self.publisher = publisher
        self.worker_id = worker_id
        self.project_id = project_id
        self.schedules = schedules
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if not self.schedules:
            return
        if self.project_id is None:
            log.warning(
                "handlers declare %d schedules but %s is not set: they are not reconciled",
                len(self.schedules),
                PROJECT_SETTING,
                extra={
                    "action": "declared_schedules_skipped",
                    "setting": PROJECT_SETTING,
                    "schedules": [d.name for d in self.schedules],
                },
            )
            return
        await self.send()
        self._task = asyncio.create_task(self._run(), name="declare-schedules")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def send(self) -> bool:
        if self.project_id is None:
            return False
        message = WorkerSchedules(
            worker_id=self.worker_id,
            project_id=self.project_id,
            schedules=self.schedules,
            sent_at=utcnow(),
        )
        try:
            await self.publisher.publish(SCHEDULES, message)
        except Exception:
            log.warning(
                "declared schedules not sent; sent again at the next interval",
                extra={"action": "declared_schedules_not_sent"},
                exc_info=True,
            )
            return False
        return True

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.send()
