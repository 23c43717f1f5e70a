"""An admin's quiet or stop, sent to the worker itself: ``WorkerControl`` on ``jobs.events``
(routing key ``control.worker``), which every worker's control queue receives and only the
named worker acts on. Published confirmed and mandatory: an answer of 202 means the broker
routed it to the workers' control queues. Nothing is stored: the worker's next heartbeat
(sent at once) carries the new state to the registry, which the console reads."""

from __future__ import annotations

import asyncio
import logging

from jobs_common.contracts import WorkerControl, utcnow
from jobs_common.errors import UpstreamUnavailable
from jobs_common.rabbit import Publisher
from jobs_common.topology import CONTROL_WORKER
from jobs_dashboard.adapters.metrics import COMMANDS_PUBLISHED
from jobs_dashboard.domain.workers import WorkerCommand

log = logging.getLogger(__name__)


class WorkerControlPublisher:
    def __init__(self, publisher: Publisher, *, timeout: float) -> None:
        self.publisher = publisher  # on the jobs.events exchange
        self.timeout = timeout

    async def send(
        self, *, worker_id: str, command: WorkerCommand, requested_by: str
    ) -> WorkerControl:
        message = WorkerControl(
            worker_id=worker_id, command=command, requested_by=requested_by, requested_at=utcnow()
        )
        fields = {
            # The audit trail of admin actions on workers: who asked what of which worker.
            "action": f"worker_{command}_requested",
            "worker_id": worker_id,
            "requested_by": requested_by,
            "trace_id": message.trace_id,
            "message_id": str(message.message_id),
        }
        try:
            async with asyncio.timeout(self.timeout):
                await self.publisher.publish(CONTROL_WORKER, message)
        except Exception as exc:
            COMMANDS_PUBLISHED.labels(command=f"worker_{command}", outcome="failed").inc()
            log.error(f"worker {command} not confirmed", extra=fields, exc_info=exc)
            raise UpstreamUnavailable(f"the {command} command could not be published") from exc
        COMMANDS_PUBLISHED.labels(command=f"worker_{command}", outcome="confirmed").inc()
        log.info(f"worker {command} published", extra=fields)
        return message
