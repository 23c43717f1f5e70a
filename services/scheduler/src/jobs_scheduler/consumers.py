"""Consumers of the scheduler: one batch handler per queue, one transaction per batch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from aio_pika.abc import AbstractIncomingMessage, AbstractQueue
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common import topology
from jobs_common.contracts import (
    CancelRequested,
    JobDispatch,
    JobLogLine,
    JobResult,
    JobRunning,
    JobSubmitted,
    Message,
    RetryRequested,
    WorkerHeartbeat,
    parse_message,
)
from jobs_common.rabbit import BatchConsumer
from jobs_scheduler import metrics
from jobs_scheduler.adapters import attempts, commands, logs, sweeps
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.jobs import JobDefaults
from jobs_scheduler.adapters.recording import record_submissions

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)


def _headers(message: AbstractIncomingMessage) -> dict[str, Any]:
    return {k: str(v) for k, v in (message.headers or {}).items()}


def death_reason(message: AbstractIncomingMessage) -> str:
    """Why RabbitMQ dead-lettered ``message`` (expired, rejected, maxlen...)."""
    deaths = (message.headers or {}).get("x-death")
    if isinstance(deaths, list) and deaths and isinstance(deaths[0], dict):
        return str(deaths[0].get("reason", "dead-lettered"))
    return "dead-lettered"


@dataclass
class Parsed(Generic[M]):
    message: M
    delivery: AbstractIncomingMessage


async def _parse_all(
    connection: AsyncConnection,
    queue: str,
    model: type[M],
    deliveries: Sequence[AbstractIncomingMessage],
) -> list[Parsed[M]]:
    """Parse each delivery; unparseable ones are recorded as poison in this transaction."""
    parsed: list[Parsed[M]] = []
    for delivery in deliveries:
        try:
            parsed.append(Parsed(parse_message(model, delivery.body), delivery))
        except (ValidationError, ValueError) as exc:
            metrics.MESSAGES.labels(queue, "poison").inc()
            log.error(
                "poison message stored",
                extra={"action": "poison", "queue": queue, "message_id": delivery.message_id},
            )
            await logs.record_poison(
                connection,
                queue=queue,
                message_id=delivery.message_id,
                reason=f"unparseable {model.__name__}: {exc}",
                body=delivery.body,
                headers=_headers(delivery),
            )
    return parsed


Apply = Callable[[AsyncConnection, Changes, Any, AbstractIncomingMessage], Awaitable[bool | str]]


class SchedulerConsumers:
    """Wires each scheduler queue to its apply function and commits batches."""

    def __init__(
        self, engine: AsyncEngine, defaults: JobDefaults, on_dispatch: Callable[[], None]
    ) -> None:
        self.engine = engine
        self.defaults = defaults
        self.on_dispatch = on_dispatch
        self.consumers: list[BatchConsumer] = []

    def handlers(self) -> dict[str, tuple[type[Message], Apply]]:
        defaults = self.defaults

        async def result(c: AsyncConnection, ch: Changes, m: JobResult, _: Any) -> bool:
            return await attempts.apply_result(c, ch, m, defaults)

        async def retry(c: AsyncConnection, ch: Changes, m: RetryRequested, _: Any) -> bool:
            return await commands.apply_retry_request(c, ch, m)

        async def cancel(c: AsyncConnection, ch: Changes, m: CancelRequested, _: Any) -> str:
            return await commands.apply_cancel_request(c, ch, m)

        async def dead(
            c: AsyncConnection, ch: Changes, m: JobDispatch, d: AbstractIncomingMessage
        ) -> str:
            return await sweeps.apply_dead_lettered(
                c, ch, m, death_reason=death_reason(d), defaults=defaults
            )

        return {
            topology.RESULTS: (JobResult, result),
            topology.RETRY: (RetryRequested, retry),
            topology.CANCEL: (CancelRequested, cancel),
            topology.DEAD: (JobDispatch, dead),
        }

    async def handle_submitted(self, deliveries: Sequence[AbstractIncomingMessage]) -> None:
        queue = topology.SUBMITTED
        changes = Changes()
        async with self.engine.begin() as connection:
            parsed = await _parse_all(connection, queue, JobSubmitted, deliveries)
            inserted = await record_submissions(
                connection, changes, [p.message for p in parsed], self.defaults
            )
            await changes.flush(connection)
        metrics.MESSAGES.labels(queue, "applied").inc(inserted)
        metrics.MESSAGES.labels(queue, "duplicate").inc(len(parsed) - inserted)
        self._committed(queue, changes, len(deliveries))

    async def handle_heartbeats(self, deliveries: Sequence[AbstractIncomingMessage]) -> None:
        queue = topology.HEARTBEAT
        changes = Changes()
        async with self.engine.begin() as connection:
            parsed = await _parse_all(connection, queue, WorkerHeartbeat, deliveries)
            renewed = (
                await attempts.apply_heartbeats(
                    connection, changes, [p.message for p in parsed], self.defaults
                )
                if parsed
                else 0
            )
            await changes.flush(connection)
        metrics.HEARTBEATS.inc(len(parsed))
        metrics.LEASES_RENEWED.inc(renewed)
        self._committed(queue, changes, len(deliveries))

    async def handle_running(self, deliveries: Sequence[AbstractIncomingMessage]) -> None:
        queue = topology.RUNNING
        changes = Changes()
        async with self.engine.begin() as connection:
            parsed = await _parse_all(connection, queue, JobRunning, deliveries)
            outcomes = (
                await attempts.apply_running(
                    connection, changes, [p.message for p in parsed], self.defaults
                )
                if parsed
                else []
            )
            await changes.flush(connection)
        for applied in outcomes:
            metrics.MESSAGES.labels(queue, "applied" if applied else "stale").inc()
        self._committed(queue, changes, len(deliveries))

    async def handle_logs(self, deliveries: Sequence[AbstractIncomingMessage]) -> None:
        queue = topology.LOGS
        async with self.engine.begin() as connection:
            parsed = await _parse_all(connection, queue, JobLogLine, deliveries)
            stored = await logs.store_log_lines(connection, [p.message for p in parsed])
        metrics.LOG_LINES.inc(stored)
        metrics.BATCH_SIZE.labels(queue).observe(len(deliveries))

    def batch_handler(
        self, queue: str, model: type[Message], apply: Apply
    ) -> Callable[[Sequence[AbstractIncomingMessage]], Awaitable[None]]:
        async def handle(deliveries: Sequence[AbstractIncomingMessage]) -> None:
            changes = Changes()
            outcomes: list[str] = []
            async with self.engine.begin() as connection:
                parsed = await _parse_all(connection, queue, model, deliveries)
                for item in sorted(parsed, key=lambda p: str(getattr(p.message, "job_id", ""))):
                    outcome = await apply(connection, changes, item.message, item.delivery)
                    outcomes.append(
                        outcome if isinstance(outcome, str) else "applied" if outcome else "stale"
                    )
                await changes.flush(connection)
            for outcome in outcomes:
                metrics.MESSAGES.labels(queue, outcome).inc()
            self._committed(queue, changes, len(deliveries))

        return handle

    def _committed(self, queue: str, changes: Changes, size: int) -> None:
        metrics.BATCH_SIZE.labels(queue).observe(size)
        for from_status, to_status in changes.moves:
            metrics.TRANSITIONS.labels(from_status, to_status).inc()
        if changes.messages:
            self.on_dispatch()

    async def start(
        self, queues: dict[str, AbstractQueue], *, max_batch: int, max_wait: float
    ) -> None:
        wiring: list[tuple[str, Callable[[Sequence[AbstractIncomingMessage]], Awaitable[None]]]]
        wiring = [
            (topology.SUBMITTED, self.handle_submitted),
            (topology.RUNNING, self.handle_running),
            (topology.HEARTBEAT, self.handle_heartbeats),
            (topology.LOGS, self.handle_logs),
        ]
        wiring += [
            (queue, self.batch_handler(queue, model, apply))
            for queue, (model, apply) in self.handlers().items()
        ]
        for queue, handler in wiring:
            consumer = BatchConsumer(queues[queue], handler, max_batch=max_batch, max_wait=max_wait)
            await consumer.start()
            self.consumers.append(consumer)

    async def ready(self) -> bool:
        """Every queue consumed here, as the broker counts it."""
        if not self.consumers:
            return False
        return all(await asyncio.gather(*(c.ready() for c in self.consumers)))

    async def stop(self) -> None:
        for consumer in self.consumers:
            await consumer.stop()
        self.consumers.clear()
