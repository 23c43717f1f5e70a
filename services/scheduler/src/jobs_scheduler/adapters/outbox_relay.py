"""The outbox relay: rows the scheduler's transactions wrote to ``outbox`` (dispatches,
cancel requests) are published to RabbitMQ with confirms and deleted once confirmed. A
dispatch's transaction started the reconciler's clock (``jobs.queued_at``); a dispatch that
waited in the outbox longer than ``clock_slack`` (the broker was away) has it restarted once
published, so the reconciler never takes a message still in a ready queue for a lost one."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

import aio_pika
from sqlalchemy import BigInteger, delete, func, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import jobs, outbox
from jobs_common.rabbit import Outgoing, Publisher
from jobs_common.topology import JOBS_EXCHANGE, READY_QUEUES
from jobs_scheduler import metrics
from jobs_scheduler.adapters.sql import any_of, interval_seconds

log = logging.getLogger(__name__)

RELAYED = delete(outbox).where(outbox.c.id == any_of("ids", BigInteger()))
# Rows locked in id order first, as every batch of the consumers locks them: an
# ``UPDATE ... WHERE id = ANY(...)`` alone locks in the order of the index scan and deadlocked
# with a batch of results.
_CLOCKED = (
    select(jobs.c.id)
    .where(jobs.c.id == any_of("ids", UUID(as_uuid=True)), jobs.c.status == "queued")
    .order_by(jobs.c.id)
    .with_for_update()
    .subquery("clocked")
)
PUBLISHED = update(jobs).where(jobs.c.id == _CLOCKED.c.id).values(queued_at=func.now())


async def relay_outbox_once(
    engine: AsyncEngine, publishers: dict[str, Publisher], limit: int, clock_slack: float
) -> int:
    """Publish a batch of outbox rows with confirms in flight together; delete the confirmed.

    The transaction that publishes touches nothing but its outbox rows: a transaction that
    fails after the broker confirmed its publishes would publish them again on the next pass
    (a second dispatch of an attempt, run a second time by a worker). Writes to ``jobs`` can
    deadlock with the consumers' batches, so the clocks of late dispatches are restarted
    afterwards, in a transaction of its own (none in the usual case). A row whose publish
    failed stays for the next pass; only a crash between the confirms and the commit
    republishes rows (consumers are fenced on ``(job_id, attempt)``).
    """
    async with engine.begin() as connection:
        rows = (
            await connection.execute(
                select(
                    outbox.c.id,
                    outbox.c.exchange,
                    outbox.c.routing_key,
                    outbox.c.job_id,
                    outbox.c.message_id,
                    outbox.c.message_type,
                    outbox.c.trace_id,
                    outbox.c.body,
                    (outbox.c.created_at < func.now() - interval_seconds(clock_slack)).label(
                        "late"
                    ),
                )
                .order_by(outbox.c.id)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
        ).all()
        if not rows:
            metrics.OUTBOX_PENDING.set(0)
            return 0
        metrics.OUTBOX_PENDING.set(len(rows))
        outcomes = await publish_rows(publishers, rows)
        confirmed = [row for row, error in zip(rows, outcomes, strict=True) if error is None]
        failed = len(rows) - len(confirmed)
        if confirmed:
            await connection.execute(RELAYED, {"ids": [row.id for row in confirmed]})
    late = sorted({row.job_id for row in confirmed if row.job_id is not None and row.late})
    if late:
        await start_reconciler_clocks(engine, late)
    metrics.OUTBOX_PUBLISHED.inc(len(confirmed))
    for queue, count in Counter(
        row.routing_key
        for row in confirmed
        if row.exchange == JOBS_EXCHANGE and row.routing_key in READY_QUEUES
    ).items():
        metrics.JOBS_DISPATCHED.labels(queue).inc(count)
    if failed:
        metrics.OUTBOX_FAILED.inc(failed)
        first_error = next(e for e in outcomes if e is not None)
        log.warning(
            "outbox publishes failed",
            extra={"action": "outbox_failed", "failed": failed, "error": repr(first_error)},
        )
    return len(confirmed)


async def start_reconciler_clocks(
    engine: AsyncEngine, job_ids: Sequence[Any], *, attempts: int = 5
) -> None:
    """``queued_at = now()`` for dispatches published late (in id order, the consumers' lock
    order), retried when PostgreSQL picks it as a deadlock victim. Left at the dispatch's own
    time, the reconciler could re-dispatch a job whose message is still in its ready queue."""
    for attempt in range(1, attempts + 1):
        try:
            async with engine.begin() as connection:
                await connection.execute(PUBLISHED, {"ids": list(job_ids)})
            return
        except DBAPIError as exc:
            if not retryable(exc) or attempt == attempts:
                log.error(
                    "reconciler clocks not started",
                    extra={"action": "queued_at_failed", "jobs": len(job_ids)},
                    exc_info=True,
                )
                return
            await asyncio.sleep(0.01 * attempt)


def retryable(exc: DBAPIError) -> bool:
    """A deadlock or a serialization failure: the same statement may succeed next time."""
    return (getattr(exc.orig, "sqlstate", None) or "") in ("40P01", "40001")


def _amqp(row: Any) -> aio_pika.Message:
    return aio_pika.Message(
        body=row.body,
        content_type="application/json",
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        message_id=str(row.message_id),
        correlation_id=row.trace_id,
        type=row.message_type,
        headers={"trace_id": row.trace_id, "v": 1},
    )


async def publish_rows(
    publishers: dict[str, Publisher], rows: Sequence[Any]
) -> list[BaseException | None]:
    """Publish outbox rows, each on its own exchange, all confirms in flight together."""

    async def one(row: Any) -> BaseException | None:
        try:
            await publishers[row.exchange].publish_raw(Outgoing(row.routing_key, _amqp(row)))
        except Exception as exc:
            return exc
        return None

    return list(await asyncio.gather(*(one(row) for row in rows)))
