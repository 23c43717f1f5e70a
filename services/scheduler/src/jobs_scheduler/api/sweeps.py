"""Background loops: the generic :class:`Loop` runner and the time-driven sweeps it runs
(promotion, reaper, dependencies, reconciler, cron, retention, rollups, usage, queue samples),
each in a transaction of its own.

Each sweep is safe with several scheduler replicas: rows are claimed with ``FOR UPDATE SKIP
LOCKED`` inside one transaction, so two replicas never handle the same row at once. The outbox
relay, also run by a :class:`Loop`, is ``adapters/outbox_relay.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import utcnow
from jobs_scheduler.adapters import horizons, metrics
from jobs_scheduler.adapters.archive import JobArchive
from jobs_scheduler.adapters.queue_samples import sample_queues
from jobs_scheduler.adapters.routing import RoutingView
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.usage import fold_usage
from jobs_scheduler.app.cron import fire_due_schedules
from jobs_scheduler.app.dependencies import release_blocked
from jobs_scheduler.app.promotion import promote_due
from jobs_scheduler.app.reaper import reap_expired
from jobs_scheduler.app.reconciler import reconcile_lost_dispatches
from jobs_scheduler.app.retention import Windows, prune
from jobs_scheduler.app.rollups import fold_rollups
from jobs_scheduler.app.waiting import release_waiting
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.retention import Retention

log = logging.getLogger(__name__)

Sweep = Callable[[AsyncConnection, Changes], Awaitable[int]]


HORIZON_PRUNE_FACTOR = 10  # rows stale for this many times the staleness limit are deleted


def sweeps_for(
    settings: Any,
    defaults: JobDefaults,
    *,
    replica_id: str = "scheduler",
    routing: RoutingView | None = None,
    pruned: Callable[[str, int], None] | None = None,
) -> dict[str, tuple[Sweep, float, int]]:
    """Every time-driven sweep: name -> (sweep, interval seconds, batch size). ``pruned``
    is told what each retention pass removed, by table (``app/store_upkeep.py``)."""
    batch = settings.sweep_batch_size

    async def promotion(c: AsyncConnection, ch: Changes) -> int:
        count = await promote_due(c, ch, batch)
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
        return await release_blocked(c, ch, batch)

    async def reconciler(c: AsyncConnection, ch: Changes) -> int:
        # Also the housekeeping of crashed replicas' read horizons, long after they went stale.
        await horizons.prune(c, older_than=HORIZON_PRUNE_FACTOR * settings.horizon_stale_seconds)
        count = await reconcile_lost_dispatches(
            c, ch, batch, settings.reconcile_after_seconds, defaults
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

    keep = Retention(
        succeeded=timedelta(days=settings.retention_succeeded_days),
        cancelled=timedelta(days=settings.retention_cancelled_days),
        dead=timedelta(days=settings.retention_dead_days),
    )
    windows = Windows(
        inbox=timedelta(days=settings.retention_inbox_days),
        poison=timedelta(days=settings.retention_poison_days),
        audit=timedelta(days=settings.retention_audit_days),
    )
    prune_batch = settings.retention_batch_size
    archive = None if settings.archive_dir is None else JobArchive(settings.archive_dir, replica_id)

    async def retention(c: AsyncConnection, ch: Changes) -> int:
        return await prune(c, ch, keep, windows, prune_batch, archive, pruned)

    async def rollups(c: AsyncConnection, ch: Changes) -> int:
        return await fold_rollups(c, settings.rollup_batch_size)

    async def usage(c: AsyncConnection, ch: Changes) -> int:
        return await fold_usage(c, settings.rollup_batch_size)

    async def queue_samples(c: AsyncConnection, ch: Changes) -> int:
        return await sample_queues(c)

    async def waiting(c: AsyncConnection, ch: Changes) -> int:
        if routing is None:
            return 0
        await routing.workers(c)  # the live workers as of now (read at most once a second)
        count = await release_waiting(c, ch, routing.servable(), batch)
        if count:
            log.info("waiting jobs dispatched", extra={"action": "release_waiting", "count": count})
        return count

    return {
        "promotion": (promotion, settings.promotion_interval_seconds, batch),
        "waiting": (waiting, settings.waiting_interval_seconds, batch),
        "reaper": (reaper, settings.reaper_interval_seconds, batch),
        "dependencies": (dependencies, settings.dependency_interval_seconds, batch),
        "reconciler": (reconciler, settings.reconcile_interval_seconds, batch),
        "cron": (cron, settings.cron_interval_seconds, batch),
        "retention": (retention, settings.retention_interval_seconds, prune_batch),
        "rollups": (rollups, settings.rollup_interval_seconds, settings.rollup_batch_size),
        "usage": (usage, settings.rollup_interval_seconds, settings.rollup_batch_size),
        # one minute at most per pass: never a full batch, so one pass per interval
        "queue_samples": (queue_samples, settings.queue_sample_interval_seconds, 2),
    }


class Loop:
    """Runs ``step`` every ``interval`` seconds (or as soon as ``sooner`` says), at once when
    woken, and again immediately while a step reports a full batch. A failing step is logged
    and retried after a pause."""

    def __init__(
        self,
        name: str,
        step: Callable[[], Awaitable[int]],
        *,
        interval: float,
        full_batch: int,
        sooner: Callable[[], float | None] | None = None,
    ) -> None:
        self.name = name
        self.step = step
        self.interval = interval
        self.full_batch = full_batch
        # After a step, how soon the next one is due if sooner than ``interval`` (None: not).
        self.sooner = sooner
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
            due = self.sooner() if self.sooner is not None else None
            try:
                await asyncio.wait_for(
                    self.wakeup.wait(), self.interval if due is None else min(due, self.interval)
                )
            except TimeoutError:
                pass
