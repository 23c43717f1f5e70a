"""Operator commands published to RabbitMQ (confirmed, mandatory) for the scheduler to perform."""

from __future__ import annotations

import asyncio
import logging
import uuid

from jobs_common.contracts import RetryRequested, utcnow
from jobs_common.errors import UpstreamUnavailable
from jobs_common.rabbit import Publisher
from jobs_common.topology import RETRY
from jobs_dashboard.metrics import COMMANDS_PUBLISHED

log = logging.getLogger(__name__)


class CommandPublisher:
    def __init__(self, publisher: Publisher, *, timeout: float) -> None:
        self.publisher = publisher
        self.timeout = timeout

    async def request_retry(
        self, *, job_id: uuid.UUID, requested_by: str, trace_id: str | None
    ) -> RetryRequested:
        """Publish RetryRequested on ``jobs.retry``; returns once the broker confirmed it."""
        extra = {"trace_id": trace_id} if trace_id else {}
        message = RetryRequested(
            job_id=job_id, requested_by=requested_by, requested_at=utcnow(), **extra
        )
        fields = {
            "action": "retry_requested",
            "job_id": str(job_id),
            "trace_id": message.trace_id,
            "message_id": str(message.message_id),
            "requested_by": requested_by,
        }
        try:
            async with asyncio.timeout(self.timeout):
                await self.publisher.publish(RETRY, message)
        except Exception as exc:
            COMMANDS_PUBLISHED.labels(command="retry", outcome="failed").inc()
            log.error("retry command not confirmed", extra=fields, exc_info=exc)
            raise UpstreamUnavailable("the retry command could not be published") from exc
        COMMANDS_PUBLISHED.labels(command="retry", outcome="confirmed").inc()
        log.info("retry command published", extra=fields)
        return message
