"""The worker runtime: one connection, one channel and consumer per ready queue with its own
prefetch, one task per delivery, a control consumer (cancellations, an admin's quiet and
stop), a heartbeat loop, a job log shipper, graceful drain on shutdown and a burst
(run-until-idle) mode.

Quiet (Sidekiq's quiet): the ready-queue consumers are cancelled, deliveries that have not
started are handed back at once, the jobs running finish, the heartbeat says ``quiet``.
Stop: quiet, then once nothing runs :attr:`WorkerRuntime.exit_requested` is set, and the
process takes its ordinary shutdown path, as on SIGTERM (``service.py``), and exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from aio_pika.abc import AbstractChannel, AbstractIncomingMessage, AbstractQueue
from aio_pika.exceptions import AMQPConnectionError

from jobs_common.contracts import WorkerControl
from jobs_common.rabbit import Publisher, RabbitBus, consumes, open_channel
from jobs_common.topology import (
    DEFAULT_QUEUE,
    JOBS_EXCHANGE,
    declare_lane,
    declare_named_queue,
    lane_for,
    ready_queues_of,
)
from jobs_worker.adapters import metrics
from jobs_worker.adapters.follow_ups import SubmissionFollowUps, follow_up_submitter
from jobs_worker.adapters.job_log_shipper import JobLogShipper
from jobs_worker.api.control import ControlConsumer
from jobs_worker.app.active_jobs import ActiveJobs
from jobs_worker.app.announce import TypeAnnouncer
from jobs_worker.app.declared_schedules import ScheduleDeclarer, declared_schedules
from jobs_worker.app.execution import JobExecutor
from jobs_worker.app.handler_loading import (
    Handlers,
    handler_configs,
    handlers_for,
    served_queues,
)
from jobs_worker.app.heartbeat import HeartbeatLoop, WorkerIdentity
from jobs_worker.domain.cancellations import CancelledSet
from jobs_worker.settings import Settings

log = logging.getLogger(__name__)


def make_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


@dataclass
class ReadyConsumer:
    queue_name: str
    channel: AbstractChannel
    queue: AbstractQueue
    consumer_tag: str | None


class WorkerRuntime:
    def __init__(self, settings: Settings, *, handlers: Handlers | None = None) -> None:
        self.settings = settings
        self.worker_id = settings.worker_id or make_worker_id()
        self.active = ActiveJobs()
        self.cancelled = CancelledSet(
            capacity=settings.cancelled_capacity, ttl=settings.cancelled_ttl
        )
        self.control = ControlConsumer(
            worker_id=self.worker_id,
            cancelled=self.cancelled,
            active=self.active,
            commands=self._on_command,
        )
        self.heartbeat: HeartbeatLoop | None = None
        self.announcer: TypeAnnouncer | None = None
        self.declarer: ScheduleDeclarer | None = None
        self.logs: JobLogShipper | None = None
        self._handlers = handlers
        self._resources = AsyncExitStack()
        self._bus: RabbitBus | None = None
        self._executor: JobExecutor | None = None
        self._consumers: dict[str, ReadyConsumer] = {}
        self.ready_queues: list[str] = []  # the ready queues this worker consumes
        self._tasks: set[asyncio.Task[None]] = set()
        self._deliveries = 0
        self._stopping = False
        self._quiet = False
        self._closed = False
        self._commanded: set[asyncio.Task[None]] = set()
        # Set by a ``stop`` command once the jobs running here have finished.
        self.exit_requested = asyncio.Event()

    @property
    def bus(self) -> RabbitBus:
        if self._bus is None:
            raise RuntimeError("worker runtime not started")
        return self._bus

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def start(self) -> None:
        handlers = self._handlers if self._handlers is not None else handlers_for(self.settings)
        queues = served_queues(self.settings, handlers.registry)
        declared = declared_schedules(handlers.registry)  # checked before connecting
        self.ready_queues = [name for queue in queues for name in ready_queues_of(queue)]
        self.ready_queues += [lane_for(job_type) for job_type in sorted(handlers.registry)]
        configs = handler_configs(handlers.registry)
        resources = await self._open_resources(handlers)
        submitter = await self._open_submitter()
        self._bus = await self._connect()
        # Control first: a cancel that arrives before a delivery must be known when it does.
        await self.control.start(self._bus.connection)
        # Log lines get their own channel: a chatty handler never delays running/result
        # publishes on the bus channel.
        log_channel = await open_channel(self._bus.connection)
        self.logs = JobLogShipper(
            publisher=Publisher(await log_channel.get_exchange(JOBS_EXCHANGE)),
            worker_id=self.worker_id,
            capacity=self.settings.job_log_queue_size,
            batch_size=self.settings.job_log_batch_size,
            linger=self.settings.job_log_linger,
        )
        await self.logs.start()
        self._executor = JobExecutor(
            settings=self.settings,
            registry=handlers.registry,
            resources=resources,
            configs=configs,
            slots=self.settings.concurrency * len(queues),
            publisher=self._bus.publisher,
            worker_id=self.worker_id,
            active=self.active,
            cancelled=self.cancelled,
            claims=self.control.claims,
            log_forwarder=self.logs.forwarder,
            queued_lines=self.logs.buffer,
            submitter=submitter,
        )
        self.heartbeat = HeartbeatLoop(
            publisher=self._bus.publisher,
            identity=WorkerIdentity.of_this_process(
                worker_id=self.worker_id,
                queues=list(self.ready_queues),
                concurrency=self.settings.concurrency,
                types=sorted(handlers.registry),
            ),
            active=self.active,
            interval=self.settings.heartbeat_interval,
            stopping=lambda: self._stopping,
            quiet=lambda: self._quiet,
            tally=self._executor.tally,
        )
        await self.heartbeat.start()
        self.announcer = TypeAnnouncer(
            publisher=self._bus.publisher,
            worker_id=self.worker_id,
            registry=handlers.registry,
            interval=self.settings.types_interval,
        )
        await self.announcer.start()
        self.declarer = ScheduleDeclarer(
            publisher=self._bus.publisher,
            worker_id=self.worker_id,
            project_id=self.settings.schedules_project,
            schedules=declared,
            interval=self.settings.types_interval,
        )
        await self.declarer.start()
        for named in queues:  # the default queues are part of the topology RabbitBus declared
            if named != DEFAULT_QUEUE:
                await declare_named_queue(self._bus.channel, named)
        for job_type in sorted(handlers.registry):
            await declare_lane(self._bus.channel, job_type)
        for name in self.ready_queues:
            prefetch = self.settings.prefetch_for(name)
            channel = await open_channel(self._bus.connection, prefetch=prefetch)
            queue = await channel.get_queue(name)  # declared above, or with the topology
            tag = await queue.consume(partial(self._on_delivery, name))
            self._consumers[name] = ReadyConsumer(name, channel, queue, tag)
        log.info(
            "worker consuming",
            extra={
                "action": "worker_started",
                "worker_id": self.worker_id,
                "prefetch": {n: self.settings.prefetch_for(n) for n in self.ready_queues},
            },
        )

    async def _connect(self) -> RabbitBus:
        """Wait for RabbitMQ up to ``startup_timeout`` (explicit start-up order)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.startup_timeout
        delay = 0.5
        while True:
            try:
                return await RabbitBus.open(self.settings.amqp_url, name=f"worker-{self.worker_id}")
            except (OSError, AMQPConnectionError) as exc:
                if loop.time() + delay > deadline:
                    raise
                log.warning(
                    "RabbitMQ not reachable yet; retrying",
                    extra={"action": "amqp_wait", "error": str(exc), "retry_in": delay},
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def _on_delivery(self, queue: str, message: AbstractIncomingMessage) -> None:
        self._deliveries += 1
        if self._stopping or self._quiet or self._executor is None:
            # Sent before our cancel took effect: hand it straight back to another worker.
            try:
                await message.nack(requeue=True)
            except Exception:
                log.debug("nack at shutdown failed", extra={"queue": queue}, exc_info=True)
            return
        task = asyncio.create_task(
            self._executor.process(message, queue), name=f"job:{queue}:{message.delivery_tag}"
        )
        self._tasks.add(task)
        metrics.ACTIVE_JOBS.inc()
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        metrics.ACTIVE_JOBS.dec()
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("delivery task crashed", extra={"action": "task_crashed"}, exc_info=exc)

    async def _stop_consuming(self) -> None:
        for consumer in self._consumers.values():
            if consumer.consumer_tag is None:
                continue
            try:
                await consumer.queue.cancel(consumer.consumer_tag)
            except Exception:
                log.warning(
                    "consumer cancel failed",
                    extra={"action": "cancel_failed", "queue": consumer.queue_name},
                    exc_info=True,
                )
            consumer.consumer_tag = None

    def _on_command(self, command: WorkerControl) -> None:
        """An admin's quiet or stop (the control queue): carried out in a task of its own."""
        work = self.quiet() if command.command == "quiet" else self.stop_after_current()
        task = asyncio.create_task(work, name=f"worker-{command.command}")
        self._commanded.add(task)
        task.add_done_callback(self._commanded.discard)

    @property
    def quiet_mode(self) -> bool:
        return self._quiet

    async def quiet(self) -> None:
        """Take no new job: cancel the ready-queue consumers, then hand back every delivery
        that has not started (its consumer's prefetch); the jobs running finish here."""
        if self._quiet or self._closed:
            return
        await self._stop_consuming()
        self._quiet = True
        if self._executor is not None:
            self._executor.quiet.set()
        metrics.WORKER_MODE.set(1)
        if self.heartbeat is not None:
            self.heartbeat.poke()
        log.info("worker quiet", extra={"action": "worker_quiet", "worker_id": self.worker_id})

    async def stop_after_current(self) -> None:
        """Quiet, then wait for the jobs running here (no timeout: they finish), then ask
        for the ordinary shutdown (:attr:`exit_requested`)."""
        await self.quiet()
        if self._closed:
            return
        self._stopping = True
        if self.heartbeat is not None:
            self.heartbeat.poke()  # shown as stopping at once
        log.info(
            "worker stops after its current jobs",
            extra={
                "action": "worker_stop",
                "worker_id": self.worker_id,
                "in_flight": self.in_flight,
            },
        )
        while self._tasks:
            await asyncio.wait(set(self._tasks))
        self.exit_requested.set()

    async def stop(self) -> None:
        """Stop consuming, let in-flight jobs finish (up to ``drain_timeout``), then close.
        Jobs still running after that are cancelled and left unacked: redelivered elsewhere."""
        if self._closed:
            return
        for command in set(self._commanded):
            command.cancel()
        self._stopping = True
        if self.heartbeat is not None:
            self.heartbeat.poke()  # tell the scheduler at once that this worker drains
        await self._stop_consuming()
        if self._tasks:
            log.info(
                "draining in-flight jobs",
                extra={"action": "drain", "in_flight": len(self._tasks)},
            )
            _, pending = await asyncio.wait(set(self._tasks), timeout=self.settings.drain_timeout)
            for task in pending:
                metrics.ABANDONED.inc()
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        self._closed = True
        if self.logs is not None:
            await self.logs.stop(flush_timeout=self.settings.job_log_flush_timeout)
        if self.heartbeat is not None:
            await self.heartbeat.stop()  # the last one: stopping, nothing active
        if self.declarer is not None:
            await self.declarer.stop()
        if self.announcer is not None:
            await self.announcer.stop()  # leaving: the registry counts this worker no more
        await self.control.stop()
        if self._bus is not None:
            await self._bus.close()
        await self._resources.aclose()
        log.info("worker stopped", extra={"action": "worker_stopped", "worker_id": self.worker_id})

    async def _open_resources(self, handlers: Handlers) -> dict[str, Any]:
        """Set up what the handler modules share (``@resource``), closed by :meth:`stop`."""
        opened: dict[str, Any] = {}
        for name, spec in handlers.resources.items():
            factory = asynccontextmanager(spec.factory)
            opened[name] = await self._resources.enter_async_context(factory())
        return opened

    async def _open_submitter(self) -> SubmissionFollowUps | None:
        """ctx.submit's client (docs/sdk.md), when WORKER_SUBMISSION_URL is set."""
        if self.settings.submission_url is None:
            return None
        return await self._resources.enter_async_context(
            follow_up_submitter(
                self.settings.submission_url,
                internal_token=self.settings.internal_token,
                timeout=self.settings.submit_timeout,
                retry_after=self.settings.submit_retry_after,
            )
        )

    async def _queues_empty(self) -> bool:
        for consumer in self._consumers.values():
            # Declared on the consumer's own channel: the reply comes after any delivery the
            # broker sent on that channel before it.
            declared = await consumer.queue.declare()
            if declared.message_count:
                return False
        return True

    async def run_until_idle(self, *, poll_interval: float = 0.05) -> None:
        """Return once nothing is in flight and every ready queue is empty, seen twice in a
        row with no delivery in between (burst mode; wrap in ``asyncio.timeout``)."""
        confirmations = 0
        while confirmations < 2:
            seen = self._deliveries
            idle = not self._tasks and await self._queues_empty()
            await asyncio.sleep(poll_interval)
            if idle and not self._tasks and self._deliveries == seen:
                confirmations += 1
            else:
                confirmations = 0

    @property
    def stopping(self) -> bool:
        return self._stopping

    async def ready_checks(self) -> dict[str, bool]:
        bus = self._bus
        checks = {
            "amqp": bus is not None
            and not bus.connection.is_closed
            and not bus.channel.is_closed
            and not self._stopping
        }
        # A quiet worker consumes no ready queue on purpose: not a part that broke (the
        # liveness watchdog would end it), so those checks are left out.
        for name in [] if self._quiet else self.ready_queues:
            consumer = self._consumers.get(name)
            checks[f"consumers:{name}"] = (
                checks["amqp"]
                and consumer is not None
                and await consumes(consumer.queue, consumer.consumer_tag)
            )
        checks["consumers:control"] = checks["amqp"] and await self.control.ready()
        return checks
