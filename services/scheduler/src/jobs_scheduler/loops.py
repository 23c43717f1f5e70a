"""Background loops: outbox relay, promotion of due jobs, lease reaper.

Each is safe with several scheduler replicas: rows are claimed with ``FOR UPDATE SKIP
LOCKED`` inside one transaction, so two replicas never handle the same row at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aio_pika
from sqlalchemy import BigInteger, delete, func, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.contracts import utcnow
from jobs_common.jobstore import jobs, outbox
from jobs_common.rabbit import Outgoing, Publisher
from jobs_scheduler import metrics
from jobs_scheduler.adapters import horizons, sweeps
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.cron import fire_due_schedules
from jobs_scheduler.adapters.jobs import JobDefaults
from jobs_scheduler.adapters.reaper import reap_expired
from jobs_scheduler.adapters.sql import any_of

log = logging.getLogger(__name__)

RELAYED = delete(outbox).where(outbox.c.id == any_of("ids", BigInteger()))
PUBLISHED = (
    update(jobs)
    .where(jobs.c.id == any_of("ids", UUID(as_uuid=True)), jobs.c.status == "queued")
    .values(queued_at=func.now())
)


async def relay_outbox_once(
    engine: AsyncEngine, publishers: dict[str, Publisher], limit: int
) -> int:
    """Publish a batch of outbox rows with confirms in flight together; delete the confirmed.

    A row whose publish failed stays for the next pass. A crash after publishing but before
    the commit republishes the rows: consumers are fenced on (job_id, attempt).
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
            dispatched = [row.job_id for row in confirmed if row.job_id is not None]
            if dispatched:
                # The reconciler's clock starts when the broker holds the ready message.
                await connection.execute(PUBLISHED, {"ids": dispatched})
    metrics.OUTBOX_PUBLISHED.inc(len(confirmed))
    if failed:
        metrics.OUTBOX_FAILED.inc(failed)
        first_error = next(e for e in outcomes if e is not None)
        log.warning(
            "outbox publishes failed",
            extra={"action": "outbox_failed", "failed": failed, "error": repr(first_error)},
        )
    return len(confirmed)


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


Sweep = Callable[[AsyncConnection, Changes], Awaitable[int]]


async def run_sweep(engine: AsyncEngine, sweep: Sweep, on_dispatch: Callable[[], None]) -> int:
    """Run one sweep in its own transaction, write its side rows, wake the relay if it
    dispatched anything."""
    changes = Changes()
    async with engine.begin() as connection:
        count = await sweep(connection, changes)
        await changes.flush(connection)
    for from_status, to_status in changes.moves:
        metrics.TRANSITIONS.labels(from_status, to_status).inc()
    if changes.messages:
        on_dispatch()
    return count


def sweeps_for(settings: Any, defaults: JobDefaults) -> dict[str, tuple[Sweep, float, int]]:
    """Every time-driven sweep: name -> (sweep, interval seconds, batch size)."""
    batch = settings.sweep_batch_size

    async def promotion(c: AsyncConnection, ch: Changes) -> int:
        count = await sweeps.promote_due(c, ch, batch)
        metrics.PROMOTED.inc(count)
        return count

    async def reaper(c: AsyncConnection, ch: Changes) -> int:
        horizon = await horizons.current(c, stale_after=settings.horizon_stale_seconds)
        if horizon is None:
            metrics.REAPER_WAITING.inc()
            return 0
        metrics.LEASE_HORIZON_LAG.set(max(0.0, (utcnow() - horizon).total_seconds()))
        leases, timeouts = await reap_expired(c, ch, batch, defaults, horizon)
        metrics.LEASES_EXPIRED.inc(leases)
        metrics.TIMEOUTS.inc(timeouts)
        if leases or timeouts:
            log.warning(
                "reaped attempts", extra={"action": "reap", "leases": leases, "timeouts": timeouts}
            )
        return leases + timeouts

    async def dependencies(c: AsyncConnection, ch: Changes) -> int:
        return await sweeps.release_blocked(c, ch, batch)

    async def reconciler(c: AsyncConnection, ch: Changes) -> int:
        count = await sweeps.reconcile_lost_dispatches(
            c, ch, batch, settings.reconcile_after_seconds
        )
        metrics.RECONCILED.inc(count)
        if count:
            log.warning(
                "re-dispatched lost ready messages", extra={"action": "reconcile", "count": count}
            )
        return count

    async def cron(c: AsyncConnection, ch: Changes) -> int:
        count = await fire_due_schedules(c, ch, batch, defaults)
        metrics.CRON_FIRED.inc(count)
        return count

    return {
        "promotion": (promotion, settings.promotion_interval_seconds, batch),
        "reaper": (reaper, settings.reaper_interval_seconds, batch),
        "dependencies": (dependencies, settings.dependency_interval_seconds, batch),
        "reconciler": (reconciler, settings.reconcile_interval_seconds, batch),
        "cron": (cron, settings.cron_interval_seconds, batch),
    }


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
