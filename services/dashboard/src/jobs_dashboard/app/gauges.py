"""The platform gauges: queue depth, the oldest queued job's age and the time to drain per
ready queue, each project's queue's figures (docs/flow-control.md), open dead letters, live
workers. Refreshed by one background task started in the
app's lifespan, every ``DASHBOARD_GAUGE_REFRESH_INTERVAL_SECONDS``; a scrape only reads them.

Each gauge refreshes on its own: a failure is logged and counted
(``dashboard_gauge_refresh_errors_total{gauge}``), the gauge keeps its last value, and the
others and the service carry on. The broker is asked with a bounded passive declare per
ready queue (``ready_queue_counts``); a queue it did not answer for has no ``queue_depth``
sample until it does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta

from prometheus_client import Gauge

from jobs_common.rabbit import RabbitBus
from jobs_common.topology import READY_QUEUE_BY_PRIORITY, READY_QUEUES
from jobs_dashboard.adapters import metrics
from jobs_dashboard.adapters.broker_queues import ready_queue_counts
from jobs_dashboard.adapters.gauge_reads import GaugeReads
from jobs_dashboard.adapters.registry import RegistryStore
from jobs_dashboard.adapters.workers import WorkerStore
from jobs_dashboard.domain.queue_gauges import CompletionRates, oldest_age_seconds, time_to_drain

log = logging.getLogger(__name__)

# Dead workers stay listed as worker_up 0 for this long, then their series go away.
WORKER_UP_DEAD_MINUTES = 60


PROJECT_QUEUE_GAUGES = (
    metrics.QUEUE_WAITING,
    metrics.QUEUE_RUNNING,
    metrics.QUEUE_LIMIT,
    metrics.QUEUE_PAUSED,
    metrics.QUEUE_OLDEST_WAITING,
)


def set_or_remove(gauge: Gauge, label: str | tuple[str, ...], value: float | None) -> None:
    """Set ``gauge{label}`` (one label value, or several), or drop its sample when there is no
    value."""
    labels = (label,) if isinstance(label, str) else label
    if value is not None:
        gauge.labels(*labels).set(value)
        return
    try:
        gauge.remove(*labels)
    except KeyError:
        pass


class PlatformGauges:
    def __init__(
        self,
        *,
        registry: RegistryStore,
        workers: WorkerStore,
        reads: GaugeReads,
        bus: RabbitBus | None,
        interval: float,
        rate_window: float,
        worker_dead_after: float,
        horizon_stale_after: float = 90.0,
        broker_timeout: float = 2.0,
    ) -> None:
        self.registry = registry
        self.workers = workers
        self.reads = reads
        self.bus = bus
        self.interval = interval
        self.worker_dead_after = timedelta(seconds=worker_dead_after)
        self.horizon_stale_after = timedelta(seconds=horizon_stale_after)
        # worker_up as last judged: a worker not judged now (unknown) keeps its value.
        self.worker_up: dict[str, float] = {}
        self.broker_timeout = broker_timeout
        self.rates = CompletionRates(rate_window)
        self.depths: dict[str, int] = {}
        self._events_read: tuple[int, float] | None = None  # (job_events id, monotonic time)
        self._queues_shown: set[tuple[str, str]] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="platform-gauges")

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self.interval)

    async def refresh(self) -> None:
        """Every gauge once; the time to drain last, from the depths and rates just read."""
        parts: dict[str, Callable[[], Awaitable[None]]] = {
            "queue_depth": self._queue_depth,
            "queue_oldest_ready_age_seconds": self._oldest_ready_age,
            "queue_time_to_drain_seconds": self._time_to_drain,
            "dlq_size": self._dlq_size,
            "project_queues": self._project_queues,
            "worker_up": self._workers,
        }
        for name, part in parts.items():
            try:
                await part()
            except Exception:
                metrics.GAUGE_REFRESH_ERRORS.labels(name).inc()
                log.warning(
                    "gauge refresh failed",
                    extra={"action": "gauge_refresh_failed", "gauge": name},
                    exc_info=True,
                )

    async def _queue_depth(self) -> None:
        counts = await ready_queue_counts(self.bus, READY_QUEUES, timeout=self.broker_timeout)
        self.depths = {name: ready for name, (ready, _) in counts.items()}
        for name in READY_QUEUES:
            set_or_remove(metrics.QUEUE_DEPTH, name, self.depths.get(name))

    async def _oldest_ready_age(self) -> None:
        now, queued = await self.registry.queued_by_priority()
        for priority, name in READY_QUEUE_BY_PRIORITY.items():
            _, oldest = queued.get(int(priority), (0, None))
            metrics.QUEUE_OLDEST_READY_AGE.labels(name).set(oldest_age_seconds(now, oldest))

    async def _time_to_drain(self) -> None:
        after = None if self._events_read is None else self._events_read[0]
        upto, ended = await self.reads.attempts_ended(after=after)
        at = time.monotonic()
        if self._events_read is not None:
            self.rates.add(self._events_read[1], at, ended)
        self._events_read = (upto, at)
        for priority, name in READY_QUEUE_BY_PRIORITY.items():
            estimate = time_to_drain(self.depths.get(name), self.rates.per_second(int(priority)))
            set_or_remove(metrics.QUEUE_TIME_TO_DRAIN, name, estimate)

    async def _project_queues(self) -> None:
        """Each project's queue's figures; the series of a queue deleted since go."""
        now, figures = await self.reads.project_queues()
        shown = set()
        for queue in figures:
            labels = (str(queue.project_id), queue.name)
            shown.add(labels)
            metrics.QUEUE_WAITING.labels(*labels).set(queue.waiting)
            metrics.QUEUE_RUNNING.labels(*labels).set(queue.running)
            metrics.QUEUE_PAUSED.labels(*labels).set(1 if queue.paused else 0)
            set_or_remove(metrics.QUEUE_LIMIT, labels, queue.max_concurrency)
            metrics.QUEUE_OLDEST_WAITING.labels(*labels).set(
                oldest_age_seconds(now, queue.oldest_queued_at)
            )
        for labels in self._queues_shown - shown:
            for gauge in PROJECT_QUEUE_GAUGES:
                set_or_remove(gauge, labels, None)
        self._queues_shown = shown

    async def _dlq_size(self) -> None:
        metrics.DLQ_SIZE.set(await self.reads.open_dead_letters())

    async def _workers(self) -> None:
        listed = await self.workers.workers(
            dead_after=self.worker_dead_after,
            include_dead_minutes=WORKER_UP_DEAD_MINUTES,
            horizon_stale_after=self.horizon_stale_after,
        )
        up: dict[str, float] = {}
        for worker in listed.items:
            if worker.status != "unknown":
                up[worker.id] = 0.0 if worker.status == "dead" else 1.0
            elif worker.id in self.worker_up:
                # Not judged while the scheduler reads no heartbeats: neither up nor down.
                up[worker.id] = self.worker_up[worker.id]
        self.worker_up = up
        # No await from here on: a scrape never sees the series half replaced.
        metrics.WORKER_UP.clear()
        for worker_id, value in up.items():
            metrics.WORKER_UP.labels(worker_id).set(value)
        metrics.WORKERS_UP.set(sum(up.values()))
