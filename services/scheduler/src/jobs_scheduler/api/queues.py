"""Consumers of the scheduler: one batch handler per queue, one transaction per batch.

Every batch runs the same way: read-horizon ticks are taken out, the rest is parsed
(unparseable messages are stored as poison), applied by the queue's apply function, the side
rows are written, the tick's horizon is recorded, and the transaction commits; only then does
the broker get its acks (:class:`~jobs_common.rabbit.BatchConsumer`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Generic, TypeVar

from aio_pika.abc import AbstractChannel, AbstractIncomingMessage, AbstractQueue
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common import log_context, topology
from jobs_common.acks import AckPolicy
from jobs_common.contracts import (
    CancelRequested,
    JobDispatch,
    JobLogLines,
    JobResults,
    JobRunning,
    JobsSubmitted,
    Message,
    ReadTick,
    RetryRequested,
    WorkerHeartbeat,
    WorkerSchedules,
    parse_message,
    utcnow,
)
from jobs_common.rabbit import BatchConsumer
from jobs_scheduler.adapters import horizons, logs, metrics
from jobs_scheduler.adapters.job_log import log_committed
from jobs_scheduler.adapters.job_metrics import record_committed
from jobs_scheduler.adapters.retried import commit_retried, lock_conflict
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app import commands
from jobs_scheduler.app.broker_dead_letters import apply_dead_lettered
from jobs_scheduler.app.declared_schedules import apply_declared
from jobs_scheduler.app.heartbeats import apply_heartbeats
from jobs_scheduler.app.intake import record_jobs
from jobs_scheduler.app.results import apply_results
from jobs_scheduler.app.running import apply_running
from jobs_scheduler.domain.defaults import JobDefaults

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)
TICK_TYPE = ReadTick.model_fields["type"].default


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


# A batch that meets a deadlock or a serialization failure is tried again at once, this many
# times in all, a pause growing by this much between tries.
LOCK_CONFLICT_TRIES = 5
LOCK_CONFLICT_PAUSE = 0.02


def _lock_conflict_logged(queue: str, exc: Exception) -> bool:
    if not lock_conflict(exc):
        return False
    metrics.LOCK_CONFLICTS.labels(queue).inc()
    log.warning(
        "batch met a lock conflict; tried again",
        extra={"action": "lock_conflict_retry", "queue": queue, "error": str(exc)[:200]},
    )
    return True


def split_ticks(
    deliveries: Sequence[AbstractIncomingMessage],
) -> tuple[datetime | None, list[AbstractIncomingMessage]]:
    """The latest read tick of the batch (None if it has none) and the other deliveries.

    A delivery typed as a tick whose body does not parse stays with the others (and is
    stored as poison there).
    """
    latest: datetime | None = None
    rest: list[AbstractIncomingMessage] = []
    for delivery in deliveries:
        if delivery.type == TICK_TYPE:
            try:
                sent_at = parse_message(ReadTick, delivery.body).sent_at
            except (ValidationError, ValueError):
                rest.append(delivery)
                continue
            latest = sent_at if latest is None else max(latest, sent_at)
        else:
            rest.append(delivery)
    return latest, rest


# Applies the parsed messages of one batch; returns how many had each outcome.
BatchApply = Callable[[AsyncConnection, Changes, list[Parsed[Any]]], Awaitable[Counter[str]]]
# Applies one message; returns its outcome (True: applied, False: stale, or a name).
OneApply = Callable[[AsyncConnection, Changes, Any, AbstractIncomingMessage], Awaitable[bool | str]]


def one_by_one(apply: OneApply) -> BatchApply:
    """A batch apply from a per-message one, in job id order (a stable lock order); each
    message's trace id, job id and attempt are bound to the log context while it is applied."""

    async def batch(
        connection: AsyncConnection, changes: Changes, parsed: list[Parsed[Any]]
    ) -> Counter[str]:
        outcomes: Counter[str] = Counter()
        for item in sorted(parsed, key=lambda p: str(getattr(p.message, "job_id", ""))):
            message = item.message
            job_id = getattr(message, "job_id", None)
            with log_context.bind(
                trace_id=message.trace_id,
                job_id=None if job_id is None else str(job_id),
                attempt=getattr(message, "attempt", None),
            ):
                outcome = await apply(connection, changes, message, item.delivery)
            name = outcome if isinstance(outcome, str) else "applied" if outcome else "stale"
            outcomes[name] += 1
        return outcomes

    return batch


class ReadProgress:
    """This replica's read horizon per ticked queue, as committed (for the lag gauge)."""

    def __init__(self) -> None:
        self.horizons: dict[str, datetime] = {}

    def advance(self, queue: str, horizon: datetime) -> None:
        previous = self.horizons.get(queue)
        if previous is None or horizon > previous:
            self.horizons[queue] = horizon

    def lag_seconds(self, queue: str) -> float:
        horizon = self.horizons.get(queue)
        return 0.0 if horizon is None else max(0.0, (utcnow() - horizon).total_seconds())


class SchedulerConsumers:
    """Wires each scheduler queue to its apply function and commits batches."""

    def __init__(
        self,
        engine: AsyncEngine,
        defaults: JobDefaults,
        on_dispatch: Callable[[], None],
        *,
        replica_id: str,
        on_committed: Callable[[Changes], None] = lambda _: None,
    ) -> None:
        self.engine = engine
        self.defaults = defaults
        self.on_dispatch = on_dispatch
        self.on_committed = on_committed
        self.replica_id = replica_id
        self.progress = ReadProgress()
        self.consumers: list[BatchConsumer] = []
        self._gone: set[str] = set()  # queues whose consumer the last check found gone
        for queue in horizons.TICKED_QUEUES:
            metrics.CONSUMER_LAG.labels(queue).set_function(
                partial(self.progress.lag_seconds, queue)
            )

    def appliers(self) -> dict[str, tuple[type[Message], BatchApply]]:
        """Each consumed queue: its message model and how a batch of them is applied."""
        defaults = self.defaults

        async def submitted(
            c: AsyncConnection, ch: Changes, parsed: list[Parsed[JobsSubmitted]]
        ) -> Counter[str]:
            return await record_jobs(
                c, ch, [job for p in parsed for job in p.message.jobs], defaults
            )

        async def running(
            c: AsyncConnection, ch: Changes, parsed: list[Parsed[JobRunning]]
        ) -> Counter[str]:
            applied = await apply_running(c, ch, [p.message for p in parsed], defaults)
            return Counter("applied" if a else "stale" for a in applied)

        async def heartbeats(
            c: AsyncConnection, ch: Changes, parsed: list[Parsed[WorkerHeartbeat]]
        ) -> Counter[str]:
            renewed = await apply_heartbeats(c, ch, [p.message for p in parsed], defaults)
            metrics.HEARTBEATS.inc(len(parsed))
            metrics.LEASES_RENEWED.inc(renewed)
            return Counter(applied=len(parsed))

        async def log_lines(
            c: AsyncConnection, ch: Changes, parsed: list[Parsed[JobLogLines]]
        ) -> Counter[str]:
            lines = [line for p in parsed for line in p.message.lines]
            stored = await logs.store_log_lines(c, lines)
            ch.lines.extend(lines)
            metrics.LOG_LINES.inc(stored)
            return Counter(applied=stored, duplicate=len(lines) - stored)

        async def results(
            c: AsyncConnection, ch: Changes, parsed: list[Parsed[JobResults]]
        ) -> Counter[str]:
            reports = [result for p in parsed for result in p.message.results]
            outcomes = await apply_results(c, ch, reports, defaults)
            # Log lines that rode along with the results (JobResults.lines).
            lines = [line for p in parsed for line in p.message.lines]
            if lines:
                metrics.LOG_LINES.inc(await logs.store_log_lines(c, lines))
                ch.lines.extend(lines)
            return outcomes

        async def retry(c: AsyncConnection, ch: Changes, m: RetryRequested, _: Any) -> bool:
            return await commands.apply_retry_request(c, ch, m)

        async def cancel(c: AsyncConnection, ch: Changes, m: CancelRequested, _: Any) -> str:
            return await commands.apply_cancel_request(c, ch, m)

        async def dead(
            c: AsyncConnection, ch: Changes, m: JobDispatch, d: AbstractIncomingMessage
        ) -> str:
            return await apply_dead_lettered(
                c, ch, m, death_reason=death_reason(d), defaults=defaults
            )

        async def declared(
            c: AsyncConnection, _: Changes, parsed: list[Parsed[WorkerSchedules]]
        ) -> Counter[str]:
            return await apply_declared(c, [p.message for p in parsed])

        return {
            topology.SUBMITTED: (JobsSubmitted, submitted),
            topology.RUNNING: (JobRunning, running),
            topology.HEARTBEAT: (WorkerHeartbeat, heartbeats),
            topology.LOGS: (JobLogLines, log_lines),
            topology.RESULTS: (JobResults, results),
            topology.RETRY: (RetryRequested, one_by_one(retry)),
            topology.CANCEL: (CancelRequested, one_by_one(cancel)),
            topology.DEAD: (JobDispatch, one_by_one(dead)),
            topology.SCHEDULES: (WorkerSchedules, declared),
        }

    def batch_handler(
        self, queue: str, model: type[Message], apply: BatchApply
    ) -> Callable[[Sequence[AbstractIncomingMessage]], Awaitable[None]]:
        async def handle(deliveries: Sequence[AbstractIncomingMessage]) -> None:
            tick, rest = split_ticks(deliveries)

            async def apply_batch(connection: AsyncConnection) -> tuple[Changes, Counter[str]]:
                changes = Changes()
                outcomes: Counter[str] = Counter()
                parsed = await _parse_all(connection, queue, model, rest)
                if parsed:
                    outcomes = await apply(connection, changes, parsed)
                await changes.flush(connection)
                if tick is not None:
                    await horizons.record(
                        connection, replica_id=self.replica_id, queue=queue, horizon=tick
                    )
                return changes, outcomes

            # A lock conflict is tried again here, in order: requeued, the batch would come
            # back behind deliveries this consumer applies meanwhile, read ticks among them,
            # and the read horizon would pass messages not applied yet (a heartbeat's
            # renewals: leases judged expired that it would have renewed).
            changes, outcomes = await commit_retried(
                self.engine,
                apply_batch,
                attempts=LOCK_CONFLICT_TRIES,
                pause=LOCK_CONFLICT_PAUSE,
                retry_if=partial(_lock_conflict_logged, queue),
            )
            if tick is not None:
                self.progress.advance(queue, tick)
            for outcome, count in outcomes.items():
                metrics.MESSAGES.labels(queue, outcome).inc(count)
            self._committed(queue, changes, len(deliveries))

        return handle

    def _committed(self, queue: str, changes: Changes, size: int) -> None:
        metrics.BATCH_SIZE.labels(queue).observe(size)
        record_committed(changes)
        log_committed(changes)
        if changes.messages:
            self.on_dispatch()
        self.on_committed(changes)

    async def record_dead(self, queue: str, delivery: AbstractIncomingMessage, reason: str) -> None:
        """The dead path of a queue without a dead-letter exchange: ``poison_messages``."""
        async with self.engine.begin() as connection:
            await logs.record_poison(
                connection,
                queue=queue,
                message_id=delivery.message_id,
                reason=reason,
                body=delivery.body,
                headers=_headers(delivery),
            )

    async def start(
        self,
        queues: dict[str, AbstractQueue],  # each on a channel of its own
        *,
        max_batch: int,
        max_wait: float,
        max_bytes: Mapping[str, int] | None = None,  # by queue: a batch's bodies at most
        policy: AckPolicy | None = None,
        requeue_counts_capacity: int = 10_000,
    ) -> None:
        for queue, (model, apply) in self.appliers().items():
            consumer = BatchConsumer(
                queues[queue],
                self.batch_handler(queue, model, apply),
                max_batch=max_batch,
                max_wait=max_wait,
                max_bytes=(max_bytes or {}).get(queue),
                policy=policy,
                requeue_counts_capacity=requeue_counts_capacity,
                dead_letter=partial(self.record_dead, queue),
                own_channel=True,
            )
            await consumer.start()
            self.consumers.append(consumer)

    async def ready(self) -> bool:
        """Every queue consumed here, as the broker counts it; the queues that are not are
        logged (after a broker restart, which one did not come back)."""
        if not self.consumers:
            return False
        states = await asyncio.gather(*(c.ready() for c in self.consumers))
        missing = [c.queue.name for c, ok in zip(self.consumers, states, strict=True) if not ok]
        if missing:
            log.warning(
                "queues without this replica's consumer",
                extra={"action": "consumers_missing", "queues": missing},
            )
        return not missing

    async def mend(self, new_channel: Callable[[], Awaitable[AbstractChannel]]) -> int:
        """Consume again, on a fresh channel, each queue whose consumer of this replica is
        gone while the connection is up: the robust connection sometimes brings a channel
        back without it after a broker restart. Until mended, this replica's read horizon of
        that queue stands still, and every lease and claim judgment waits for it. A consumer
        is mended when two checks in a row (a loop interval apart) find it gone, so one that
        aio-pika is restoring at that moment is left to it. Returns how many were mended."""
        mended = 0
        for consumer in list(self.consumers):
            name = consumer.queue.name
            if consumer.stopped:  # on purpose (shutting down)
                self._gone.discard(name)
                continue
            if await consumer.ready():
                self._gone.discard(name)
                continue
            if name not in self._gone:
                self._gone.add(name)
                continue
            await consumer.consume_on(await new_channel())
            self._gone.discard(name)
            metrics.CONSUMERS_MENDED.labels(name).inc()
            log.warning(
                "consumer gone; consuming again on a new channel",
                extra={"action": "consumer_mended", "queue": name},
            )
            mended += 1
        return mended

    def forget_gone(self) -> None:
        """The connection is away: what a check saw before says nothing about after it."""
        self._gone.clear()

    async def stop(self) -> None:
        for consumer in self.consumers:
            await consumer.stop()
        self.consumers.clear()
