"""The job types this worker serves, announced on ``jobs.types`` for the platform's type
registry (kept by the submission service): once at start, before the first delivery, again
every ``types_interval`` (the registry counts a worker live while it keeps announcing), and
once with ``leaving`` when the worker stops. An announcement that is not confirmed is logged
and sent again at the next interval."""

from __future__ import annotations

import asyncio
import logging

from jobs_common.contracts import JobTypeInfo, WorkerTypes, utcnow
from jobs_common.rabbit import Publisher
from jobs_common.topology import TYPES
from jobs_sdk.context import HandlerSpec, Registry

log = logging.getLogger(__name__)


def type_info(spec: HandlerSpec) -> JobTypeInfo:
    """What the registry learns of a handler: its schemas, defaults, queue and slots."""
    return JobTypeInfo(
        job_type=spec.job_type,
        payload_schema=spec.payload_model.model_json_schema(by_alias=True),
        result_schema=(
            spec.result_model.model_json_schema(by_alias=True) if spec.result_model else None
        ),
        timeout_seconds=spec.timeout_seconds,
        max_attempts=spec.max_attempts,
        queue=spec.queue,
        slots=spec.slots,
    )


class TypeAnnouncer:
    def __init__(
        self, *, publisher: Publisher, worker_id: str, registry: Registry, interval: float
    ) -> None:
        self.publisher = publisher
        self.worker_id = worker_id
        self.types = [type_info(spec) for spec in sorted(registry.values(), key=_type_of)]
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.send()
        self._task = asyncio.create_task(self._run(), name="announce-types")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self.send(leaving=True)

    async def send(self, *, leaving: bool = False) -> bool:
        message = WorkerTypes(
            worker_id=self.worker_id, types=self.types, sent_at=utcnow(), leaving=leaving
        )
        try:
            await self.publisher.publish(TYPES, message)
        except Exception:
            log.warning(
                "job types not announced",
                extra={"action": "types_not_announced", "leaving": leaving},
                exc_info=True,
            )
            return False
        return True

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.send()


def _type_of(spec: HandlerSpec) -> str:
    return spec.job_type
