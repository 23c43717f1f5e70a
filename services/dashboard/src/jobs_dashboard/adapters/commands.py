"""Operator commands published to RabbitMQ (confirmed, mandatory) for the scheduler to perform."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from jobs_common.contracts import CancelRequested, Message, RetryRequested, utcnow
from jobs_common.errors import UpstreamUnavailable
from jobs_common.rabbit import Outgoing, Publisher, amqp_message
from jobs_common.topology import CANCEL, RETRY
from jobs_dashboard.metrics import COMMANDS_PUBLISHED

log = logging.getLogger(__name__)


def _trace(trace_id: str | None) -> dict[str, str]:
    return {"trace_id": trace_id} if trace_id else {}


def retry_requested(
    *,
    job_id: uuid.UUID,
    requested_by: str,
    trace_id: str | None,
    reason: str | None = None,
    payload: dict[str, Any] | None = None,
    not_before: datetime | None = None,
) -> RetryRequested:
    return RetryRequested(
        job_id=job_id,
        requested_by=requested_by,
        requested_at=utcnow(),
        reason=reason,
        payload=payload,
        not_before=not_before,
        **_trace(trace_id),
    )


class CommandPublisher:
    def __init__(self, publisher: Publisher, *, timeout: float, chunk: int = 500) -> None:
        self.publisher = publisher
        self.timeout = timeout
        self.chunk = chunk

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
        message = retry_requested(job_id=job_id, requested_by=requested_by, trace_id=trace_id)
        await self._publish("retry", RETRY, message, job_id)
        return message

    async def request_requeue(self, message: RetryRequested) -> None:
        """A dead-letter requeue: RetryRequested (maybe with an edited payload) on jobs.retry."""
        await self._publish("requeue", RETRY, message, message.job_id)

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

    async def publish_requeues(self, messages: Sequence[RetryRequested]) -> list[bool]:
        """Publish many requeues, ``chunk`` confirms in flight at a time; True where confirmed.

        Stops at the first chunk with a failure (the broker is likely gone): the rest count as
        unconfirmed. A chunk that times out counts as unconfirmed as a whole (some of it may
        still arrive; the scheduler ignores a retry of a job that is no longer dead).
        """
        confirmed: list[bool] = []
        for start in range(0, len(messages), self.chunk):
            part = messages[start : start + self.chunk]
            items = [Outgoing(RETRY, amqp_message(message)) for message in part]
            try:
                async with asyncio.timeout(self.timeout):
                    outcomes = await self.publisher.publish_many(items)
            except Exception:
                log.error(
                    "requeue chunk not confirmed",
                    extra={"action": "bulk_requeue_publish", "size": len(part)},
                    exc_info=True,
                )
                outcomes = []
            confirmed += [outcome is None for outcome in outcomes]
            if len(outcomes) < len(part) or not all(outcome is None for outcome in outcomes):
                break
        ok = sum(confirmed)
        confirmed += [False] * (len(messages) - len(confirmed))
        COMMANDS_PUBLISHED.labels(command="requeue", outcome="confirmed").inc(ok)
        COMMANDS_PUBLISHED.labels(command="requeue", outcome="failed").inc(len(messages) - ok)
        return confirmed
