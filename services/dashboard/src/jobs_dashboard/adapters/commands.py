"""A job's retry and cancel, published to RabbitMQ (confirmed, mandatory) for the scheduler to
perform: accepted while the scheduler is down or paused, applied when it reads them (the
commands on the dead letters and schedules go to its internal API: ``scheduler_api.py``)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from jobs_common.contracts import CancelRequested, Message, RetryRequested, utcnow
from jobs_common.errors import UpstreamUnavailable
from jobs_common.rabbit import Publisher
from jobs_common.topology import CANCEL, RETRY
from jobs_dashboard.adapters.metrics import COMMANDS_PUBLISHED

log = logging.getLogger(__name__)


def _trace(trace_id: str | None) -> dict[str, str]:
    return {"trace_id": trace_id} if trace_id else {}


class CommandPublisher:
    def __init__(self, publisher: Publisher, *, timeout: float) -> None:
        self.publisher = publisher
        self.timeout = timeout

    async def _publish(self, command: str, routing_key: str, message: Message, job_id: Any) -> None:
        fields = {
            "action": f"{command}_requested",
            "job_id": str(job_id),
            "trace_id": message.trace_id,
            "message_id": str(message.message_id),
            "requested_by": getattr(message, "requested_by", None),
        }
        try:
            async with asyncio.timeout(self.timeout):
                await self.publisher.publish(routing_key, message)
        except Exception as exc:
            COMMANDS_PUBLISHED.labels(command=command, outcome="failed").inc()
            log.error(f"{command} command not confirmed", extra=fields, exc_info=exc)
            raise UpstreamUnavailable(f"the {command} command could not be published") from exc
        COMMANDS_PUBLISHED.labels(command=command, outcome="confirmed").inc()
        log.info(f"{command} command published", extra=fields)

    async def request_retry(
        self, *, job_id: uuid.UUID, requested_by: str, trace_id: str | None
    ) -> RetryRequested:
        """Publish RetryRequested on ``jobs.retry``; returns once the broker confirmed it."""
        message = RetryRequested(
            job_id=job_id, requested_by=requested_by, requested_at=utcnow(), **_trace(trace_id)
        )
        await self._publish("retry", RETRY, message, job_id)
        return message

    async def request_cancel(
        self, *, job_id: uuid.UUID, requested_by: str, reason: str | None, trace_id: str | None
    ) -> CancelRequested:
        """Publish CancelRequested on ``jobs.cancel``; returns once the broker confirmed it."""
        message = CancelRequested(
            job_id=job_id,
            requested_by=requested_by,
            requested_at=utcnow(),
            reason=reason,
            **_trace(trace_id),
        )
        await self._publish("cancel", CANCEL, message, job_id)
        return message
