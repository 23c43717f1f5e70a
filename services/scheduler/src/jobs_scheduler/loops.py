"""Background loops: outbox relay, promotion of due jobs, lease reaper.

Each is safe with several scheduler replicas: rows are claimed with ``FOR UPDATE SKIP
LOCKED`` inside one transaction, so two replicas never handle the same row at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import aio_pika
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import outbox
from jobs_common.rabbit import Outgoing, Publisher
from jobs_scheduler import metrics
from jobs_scheduler.adapters import store
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.store import JobDefaults

log = logging.getLogger(__name__)


async def relay_outbox_once(engine: AsyncEngine, publisher: Publisher, limit: int) -> int:
    """Publish a batch of outbox rows with confirms in flight together; delete the confirmed.

    A row whose publish failed stays for the next pass. A crash after publishing but before
    the commit republishes the rows: consumers are fenced on (job_id, attempt).
    """
    async with engine.begin() as connection:
        rows = (
            await connection.execute(
                select(
                    outbox.c.id,
                    outbox.c.routing_key,
                    outbox.c.message_id,
                    outbox.c.message_type,
                    outbox.c.trace_id,
                    outbox.c.body,
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
        outcomes = await publisher.publish_many(
            [
                Outgoing(
                    row.routing_key,
                    aio_pika.Message(
                        body=row.body,
                        content_type="application/json",
                        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                        message_id=str(row.message_id),
                        correlation_id=row.trace_id,
                        type=row.message_type,
                        headers={"trace_id": row.trace_id, "v": 1},
                    ),
                )
                for row in rows
            ]
        )
        confirmed = [row.id for row, error in zip(rows, outcomes, strict=True) if error is None]
        failed = len(rows) - len(confirmed)
        if confirmed:
            await connection.execute(delete(outbox).where(outbox.c.id.in_(confirmed)))
    metrics.OUTBOX_PUBLISHED.inc(len(confirmed))
    if failed:
        metrics.OUTBOX_FAILED.inc(failed)
        first_error = next(e for e in outcomes if e is not None)
        log.warning(
            "outbox publishes failed",
            extra={"action": "outbox_failed", "failed": failed, "error": repr(first_error)},
        )
    return len(confirmed)


async def promote_once(engine: AsyncEngine, limit: int) -> int:
    changes = Changes()
    async with engine.begin() as connection:
        count = await store.promote_due(connection, changes, limit)
        await changes.flush(connection)
    metrics.PROMOTED.inc(count)
    _count_moves(changes)
    return count


async def reap_once(engine: AsyncEngine, limit: int, defaults: JobDefaults) -> int:
    changes = Changes()
    async with engine.begin() as connection:
        count = await store.reap_expired(connection, changes, limit, defaults)
        await changes.flush(connection)
    metrics.REAPED.inc(count)
    _count_moves(changes)
    if count:
        log.warning("reaped expired attempts", extra={"action": "reap", "count": count})
    return count


async def outbox_backlog(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int(
            (await connection.execute(select(func.count()).select_from(outbox))).scalar_one()
        )


def _count_moves(changes: Changes) -> None:
    for from_status, to_status in changes.moves:
        metrics.TRANSITIONS.labels(from_status, to_status).inc()


class Loop:
    """Runs ``step`` every ``interval`` seconds, at once when woken, and again immediately
    while a step reports a full batch. A failing step is logged and retried after a pause."""

    def __init__(
        self,
        name: str,
        step: Callable[[], Awaitable[int]],
        *,
        interval: float,
        full_batch: int,
    ) -> None:
        self.name = name
        self.step = step
        self.interval = interval
        self.full_batch = full_batch
        self.wakeup = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"loop:{self.name}")

    def wake(self) -> None:
        self.wakeup.set()

    @property
    def alive(self) -> bool:
        return self.task is not None and not self.task.done()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None

    async def _run(self) -> None:
        while True:
            self.wakeup.clear()
            try:
                handled = await self.step()
            except Exception:
                metrics.LOOP_ERRORS.labels(self.name).inc()
                log.exception("loop step failed", extra={"action": "loop_error", "loop": self.name})
                handled = 0
                await asyncio.sleep(min(self.interval * 4, 5.0))
            if handled >= self.full_batch:
                continue
            try:
                await asyncio.wait_for(self.wakeup.wait(), self.interval)
            except TimeoutError:
                pass
