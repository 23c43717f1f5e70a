"""The job type registry: what workers announce on ``jobs.types`` (consumed here, kept in
MongoDB by ``adapters/job_types.py``), held in memory as a :class:`TypeCatalog` for the
submission checks and listed by ``GET /api/job-types``.

The catalog is reloaded every ``types_refresh_seconds`` from MongoDB (so every replica sees
what any of them recorded) and at once when a submission names a type it does not know yet,
so a type a worker has just announced is accepted without waiting for the next reload."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from aio_pika.abc import AbstractIncomingMessage
from pydantic import ValidationError

from jobs_common.contracts import WorkerTypes, parse_message, utcnow
from jobs_common.rabbit import open_channel
from jobs_common.topology import TYPES, waiting_reason
from jobs_submission.adapters.job_types import JobTypeStore, live_horizon
from jobs_submission.adapters.rabbit import BrokerUnavailable, BusHolder
from jobs_submission.domain.job_types import AnnouncedType, TypeCatalog

log = logging.getLogger(__name__)

# Misses reload the catalog at most this often (a flood of unknown types costs one read per
# period).
MISS_RELOAD_SECONDS = 0.25
# On stop, a reload or a channel open in flight may finish for this long before its task is
# cancelled (a driver call cancelled midway can leave its connection behind).
STOP_GRACE_SECONDS = 5.0


class TypeRegistry:
    def __init__(
        self,
        store: JobTypeStore,
        bus: BusHolder,
        *,
        refresh_seconds: float,
        worker_interval: float,
    ) -> None:
        self.store = store
        self.bus = bus
        self.refresh_seconds = refresh_seconds
        self.worker_interval = worker_interval
        self.catalog = TypeCatalog()
        self._loaded_at = 0.0
        self._miss_reload = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()
        self.consuming = False

    def start(self) -> None:
        self._stopping.clear()
        self._tasks = [
            asyncio.create_task(self._refresh_loop(), name="types-refresh"),
            asyncio.create_task(self._consume(), name="types-consume"),
        ]

    async def stop(self) -> None:
        """Stop between two steps: what is in flight finishes first (bounded)."""
        self._stopping.set()
        if self._tasks:
            _, busy = await asyncio.wait(self._tasks, timeout=STOP_GRACE_SECONDS)
            for task in busy:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when the registry stops."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    @property
    def alive(self) -> bool:
        """Its tasks run, or finished their work (the consumer task ends once consuming):
        none crashed."""
        return all(
            not task.done() or (not task.cancelled() and task.exception() is None)
            for task in self._tasks
        )

    async def catalog_for(self, job_types: Iterable[object]) -> TypeCatalog:
        """The catalog, read again first when it does not know one of ``job_types``: by a
        reload that began after this miss (a type recorded a moment ago is found), at most
        one per ``MISS_RELOAD_SECONDS`` (misses arriving meanwhile share the next one)."""
        unknown = [t for t in job_types if isinstance(t, str) and t and t not in self.catalog]
        if not unknown:
            return self.catalog
        missed_at = time.monotonic()
        async with self._miss_reload:
            if self._loaded_at <= missed_at:  # no reload began after the miss
                await asyncio.sleep(self._loaded_at + MISS_RELOAD_SECONDS - time.monotonic())
                await self.reload()
        return self.catalog

    async def reload(self) -> None:
        """Read every recorded type; ``_loaded_at`` is when the read began."""
        began = time.monotonic()
        announced = {
            str(document["_id"]): AnnouncedType.of(document)
            for document in await self.store.all_types()
        }
        if began >= self._loaded_at:  # a read that began earlier must not undo a later one
            self.catalog = TypeCatalog(announced)
            self._loaded_at = began

    async def listing(self, now: datetime | None = None) -> list[dict[str, Any]]:
        """Every announced type (the built-ins too, once a worker announced them) with its
        schemas, queue, defaults and live workers."""
        announced = [AnnouncedType.of(document) for document in await self.store.all_types()]
        horizon = live_horizon(now or utcnow(), self.worker_interval)
        live = await self.store.live_workers(seen_since=horizon)
        return [
            {
                "type": known.job_type,
                "builtin": known.builtin,
                "liveWorkers": live.get(known.job_type, 0),
                "waitingReason": None
                if live.get(known.job_type)
                else waiting_reason(known.job_type),
                "payloadSchema": known.payload_schema,
                "resultSchema": known.result_schema,
                "queue": known.queue,
                "timeoutSeconds": known.timeout_seconds,
                "maxAttempts": known.max_attempts,
                "slots": known.slots,
                "announcedAt": known.updated_at,
            }
            for known in sorted(announced, key=lambda known: known.job_type)
        ]

    async def _refresh_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.reload()
            except Exception:
                log.warning("job types not reloaded", extra={"action": "types_reload_failed"})
            await self._pause(self.refresh_seconds)

    async def _consume(self) -> None:
        """Consume ``jobs.types`` once the broker is reachable (the robust connection then
        restores the consumer after a broker restart)."""
        while not self._stopping.is_set():
            try:
                bus = await self.bus.get()
                channel = await open_channel(bus.connection, prefetch=20)
                queue = await channel.get_queue(TYPES)
                await queue.consume(self._on_message)
                self.consuming = True
                return
            except BrokerUnavailable:
                await self._pause(1.0)
            except Exception:
                log.warning("jobs.types not consumed yet", extra={"action": "types_consume_failed"})
                await self._pause(1.0)

    async def _on_message(self, message: AbstractIncomingMessage) -> None:
        try:
            announcement = parse_message(WorkerTypes, message.body)
        except (ValueError, ValidationError) as exc:
            log.warning(
                "unreadable job type announcement dropped",
                extra={"action": "types_poison", "error": str(exc)[:500]},
            )
            await message.reject(requeue=False)
            return
        try:
            await self.store.record(announcement)
        except Exception:
            log.warning(
                "job type announcement not recorded; handed back",
                extra={"action": "types_record_failed", "worker_id": announcement.worker_id},
                exc_info=True,
            )
            await asyncio.sleep(1.0)
            await message.nack(requeue=True)
            return
        await message.ack()
        if any(info.job_type not in self.catalog for info in announcement.types):
            await self.reload()
