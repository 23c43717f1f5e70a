"""Scheduler app: consumers and loops run in the lifespan; HTTP serves the ops routes and the
internal API of the tables it owns (``api/``), for the dashboard."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial

from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.db import create_engine
from jobs_common.error_handlers import install_error_handlers
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.ops_routes import add_ops_routes
from jobs_common.rabbit import Publisher, RabbitBus, open_channel
from jobs_common.request_context import LogContextMiddleware
from jobs_common.topology import EVENTS_EXCHANGE, JOBS_EXCHANGE, SUBMITTED
from jobs_scheduler.adapters import horizons, jobs
from jobs_scheduler.adapters.flow_control import FlowControl
from jobs_scheduler.adapters.live import LiveEvents
from jobs_scheduler.adapters.outbox_relay import OutboxRelay
from jobs_scheduler.adapters.queue_depths import QueueDepths
from jobs_scheduler.adapters.read_ticks import publish_ticks
from jobs_scheduler.adapters.ready_window import ReadyWindow
from jobs_scheduler.adapters.retried import commit_retried
from jobs_scheduler.adapters.routing import RoutingView
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.store_stats import STORE_TABLES
from jobs_scheduler.api.dead_letters import router as dead_letters_router
from jobs_scheduler.api.project_flow import router as project_flow_router
from jobs_scheduler.api.project_queues import router as project_queues_router
from jobs_scheduler.api.queues import SchedulerConsumers
from jobs_scheduler.api.retry_policies import router as retry_policies_router
from jobs_scheduler.api.schedules import router as schedules_router
from jobs_scheduler.api.sweeps import Loop, sweeps_for
from jobs_scheduler.app.store_upkeep import StoreUpkeep
from jobs_scheduler.app.unit_of_work import UnitOfWork
from jobs_scheduler.app.waiting import mark_waiting
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.leases import dead_predecessors
from jobs_scheduler.domain.retry import RetryPolicy
from jobs_scheduler.domain.routing import Wait
from jobs_scheduler.domain.vacuum import VacuumPolicy
from jobs_scheduler.migrate import upgrade_async
from jobs_scheduler.settings import Settings

log = logging.getLogger(__name__)


def job_defaults(settings: Settings) -> JobDefaults:
    return JobDefaults(
        max_attempts=settings.default_max_attempts,
        max_attempts_by_type=settings.max_attempts_by_type,
        retry_policy_by_type=settings.retry_policy_by_type,
        lease_seconds=settings.lease_seconds,
        poison_threshold=settings.poison_threshold,
        horizon_stale_seconds=settings.horizon_stale_seconds,
        timeout_seconds=settings.default_timeout_seconds,
        max_timeout_seconds=settings.max_timeout_seconds,
        timeout_grace_seconds=settings.timeout_grace_seconds,
        retry_policy=RetryPolicy(
            strategy=settings.retry_strategy,
            base_delay_ms=settings.retry_base_delay_ms,
            multiplier=settings.retry_multiplier,
            max_delay_ms=settings.retry_max_delay_ms,
            jitter=settings.retry_jitter,
        ),
        ttl_redispatch_limit=settings.ttl_redispatch_limit,
    )


@dataclass
class Runtime:
    engine: AsyncEngine
    bus: RabbitBus
    consumers: SchedulerConsumers
    loops: list[Loop]
    replica_id: str
    live: LiveEvents
    work: UnitOfWork  # the internal API's commands (api/)
    upkeep: StoreUpkeep

    async def ready(self) -> dict[str, bool]:
        try:
            async with self.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
            database = True
        except Exception:
            database = False
        return {"database": database, **await self.own_parts()}

    async def own_parts(self) -> dict[str, bool]:
        """This process's own parts, which a restart would mend (liveness)."""
        return {
            "broker": not self.bus.connection.is_closed and not self.bus.channel.is_closed,
            "consumers": await self.consumers.ready(),
            "loops": all(loop.alive for loop in self.loops),
        }


async def start_runtime(settings: Settings) -> Runtime:
    if settings.migrate_on_start:
        await upgrade_async(settings.database_url)
    engine = create_engine(settings.database_url, pool_size=settings.db_pool_size)
    await _forget_dead_predecessors(engine)
    bus = await RabbitBus.open(settings.amqp_url, name="scheduler")
    defaults = job_defaults(settings)
    publishers = {
        JOBS_EXCHANGE: bus.publisher,
        EVENTS_EXCHANGE: Publisher(bus.topology.events),
    }
    routing = (
        RoutingView(
            lease_seconds=settings.lease_seconds, stale_after=settings.horizon_stale_seconds
        )
        if settings.route_by_live_workers
        else None
    )
    depths = QueueDepths(bus.connection)
    outbox_relay = OutboxRelay(
        engine,
        publishers,
        limit=settings.relay_batch_size,
        clock_slack=settings.relay_clock_slack_seconds,
        routing=routing,
        depths=depths,
        fresh_drain_per_second=settings.fresh_drain_per_second,
        flow=FlowControl(),
        window=ReadyWindow(depths, size=settings.ready_window) if settings.ready_window else None,
    )
    relay = Loop(
        "outbox_relay",
        outbox_relay.pass_once,
        interval=settings.relay_interval_seconds,
        full_batch=settings.relay_batch_size,
        sooner=outbox_relay.sooner,
    )
    replica_id = settings.replica_id or make_replica_id()
    _REPLICAS_HERE.add(replica_id)
    ticks = Loop(
        "read_ticks",
        partial(publish_ticks, bus.publisher, replica_id),
        interval=settings.tick_interval_seconds,
        full_batch=1,
    )
    loops = [relay, ticks]
    live = LiveEvents(bus.topology.events)

    def committed(changes: Changes) -> None:
        live.committed(changes)
        if changes.moves and outbox_relay.waiting_for_slots:
            relay.wake()  # a job moved on: a limited queue's slot may be free

    work = UnitOfWork(engine, relay.wake, committed)

    async def wait_for_workers(waits: list[Wait]) -> None:
        await work.run(partial(mark_waiting, waits=waits))

    outbox_relay.on_waiting = wait_for_workers
    upkeep = StoreUpkeep(
        engine,
        self_vacuum=settings.vacuum_after_prune,
        policy=VacuumPolicy(
            min_dead_rows=settings.vacuum_dead_rows, dead_ratio=settings.vacuum_dead_ratio
        ),
    )
    for name, (sweep, interval, batch) in sweeps_for(
        settings, defaults, replica_id=replica_id, routing=routing, pruned=upkeep.pruned
    ).items():
        step: Callable[[], Awaitable[int]] = partial(work.run, sweep)
        if name == "retention":
            step = upkeep.after_pass(step, full_batch=batch)
        loops.append(Loop(name, step, interval=interval, full_batch=batch))
    loops.append(
        Loop(
            "store_stats",
            upkeep.observe,
            interval=settings.store_stats_interval_seconds,
            full_batch=len(STORE_TABLES) + 1,  # never: one pass per interval
        )
    )
    for loop in loops:
        loop.start()
    consumers = SchedulerConsumers(
        engine,
        defaults,
        on_dispatch=relay.wake,
        replica_id=replica_id,
        on_committed=committed,
    )
    # A channel per consumed queue: each consumer acks a whole batch with one basic.ack.
    queues = {}
    for name in consumers.appliers():
        channel = await open_channel(bus.connection, prefetch=settings.effective_prefetch)
        queues[name] = await channel.get_queue(name)
    await consumers.start(
        queues,
        max_batch=settings.consumer_batch_size,
        max_wait=settings.consumer_batch_wait_seconds,
        max_bytes={SUBMITTED: settings.intake_batch_bytes},
        policy=settings.ack_policy,
        requeue_counts_capacity=settings.consumer_requeue_counts_capacity,
    )
    mend = Loop(
        "consumers_mend",
        partial(_mend_consumers, bus, consumers, prefetch=settings.effective_prefetch),
        interval=settings.consumer_mend_interval_seconds,
        full_batch=len(consumers.consumers) + 1,  # never: one pass per interval
    )
    mend.start()
    loops.append(mend)
    after_outage = BrokerOutageLeases(engine, lease_seconds=settings.lease_seconds)
    bus.connection.reconnect_callbacks.add(after_outage.on_reconnected)
    log.info("scheduler started", extra={"action": "started", "replica_id": replica_id})
    return Runtime(engine, bus, consumers, loops, replica_id, live, work, upkeep)


async def _mend_consumers(bus: RabbitBus, consumers: SchedulerConsumers, *, prefetch: int) -> int:
    if not bus.connection.connected.is_set():
        consumers.forget_gone()
        return 0
    return await consumers.mend(partial(open_channel, bus.connection, prefetch=prefetch))


class BrokerOutageLeases:
    """A broker outage is nobody's silence: heartbeats could not reach the scheduler, and a
    worker reconnects a few seconds after the broker is back. So when this replica's
    connection comes back, every running attempt's lease runs at least a lease from then,
    and neither the reaper nor a claim takes an attempt from a worker still reconnecting
    (a worker cut off alone, the broker up, still loses it after its lease)."""

    def __init__(self, engine: AsyncEngine, *, lease_seconds: float) -> None:
        self.engine = engine
        self.lease_seconds = lease_seconds
        self._tasks: set[asyncio.Task[None]] = set()

    def on_reconnected(self, _sender: object) -> None:
        task = asyncio.create_task(self.extend(), name="leases-after-outage")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def extend(self) -> None:
        try:
            count = await commit_retried(
                self.engine,
                partial(jobs.extend_running_leases, lease_seconds=self.lease_seconds),
                pause=0.2,
            )
        except Exception:
            log.exception("leases not extended", extra={"action": "leases_extend_failed"})
            return
        log.warning(
            "broker connection back: running leases extended",
            extra={"action": "leases_extended", "count": count},
        )


# The replicas this process runs (one in production; tests start several in one process).
_REPLICAS_HERE: set[str] = set()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _forget_dead_predecessors(engine: AsyncEngine) -> None:
    """A replica that starts forgets the read horizons of this host's dead replicas (a
    restart): frozen, they would hold every lease judgment back until they go stale."""
    async with engine.begin() as connection:
        known = await horizons.replicas(connection)
        dead = dead_predecessors(
            known,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            alive=_pid_alive,
            ours=_REPLICAS_HERE,
        )
        await horizons.forget_all(connection, dead)
    if dead:
        log.info(
            "read horizons of dead replicas forgotten",
            extra={"action": "horizons_forgotten", "replicas": dead},
        )


def make_replica_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


# Each step of a stop may take this long; past it the stop goes on without it (logged by
# name), so a broker or database that stopped answering cannot hold the process.
STOP_STEP_SECONDS = 15.0


async def _bounded(step: str, action: Awaitable[object]) -> None:
    try:
        async with asyncio.timeout(STOP_STEP_SECONDS):
            await action
    except TimeoutError:
        log.warning(
            "stop step took too long; going on without it",
            extra={"action": "stop_step_timeout", "step": step, "seconds": STOP_STEP_SECONDS},
        )


async def stop_runtime(runtime: Runtime) -> None:
    _REPLICAS_HERE.discard(runtime.replica_id)
    await _bounded("consumers", runtime.consumers.stop())
    for loop in runtime.loops:
        await _bounded(f"loop {loop.name}", loop.stop())
    try:
        await _bounded("forget read horizons", _forget_horizons(runtime))
    except Exception:  # the database may be gone; the rows go stale by themselves
        log.warning("read horizons not forgotten", extra={"action": "forget_failed"})
    await _bounded("live events", runtime.live.close())
    await _bounded("broker", runtime.bus.close())
    await _bounded("database", runtime.engine.dispose())


async def _forget_horizons(runtime: Runtime) -> None:
    async with runtime.engine.begin() as connection:
        await horizons.forget(connection, replica_id=runtime.replica_id)


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = await start_runtime(settings)
        app.state.runtime = runtime
        app.state.engine = runtime.engine  # the internal API's (api/)
        app.state.work = runtime.work
        app.state.defaults = job_defaults(settings)  # a schedule's run now records a job
        try:
            yield
        finally:
            await stop_runtime(runtime)

    app = FastAPI(title="jobs scheduler", lifespan=lifespan)
    app.state.internal_token = settings.internal_token
    app.state.previous_internal_tokens = settings.previous_internal_tokens
    install_error_handlers(app)
    app.add_middleware(LogContextMiddleware)
    app.add_middleware(HttpMetricsMiddleware)

    async def ready() -> dict[str, bool]:
        runtime: Runtime | None = getattr(app.state, "runtime", None)
        return await runtime.ready() if runtime else {"started": False}

    async def live() -> dict[str, bool]:
        runtime: Runtime | None = getattr(app.state, "runtime", None)
        return await runtime.own_parts() if runtime else {}

    def warnings() -> list[str]:
        runtime: Runtime | None = getattr(app.state, "runtime", None)
        return runtime.upkeep.warnings() if runtime else []

    add_ops_routes(app, ready, live=live, settings=settings, warnings=warnings)
    app.include_router(schedules_router)
    app.include_router(retry_policies_router)
    app.include_router(dead_letters_router)
    app.include_router(project_queues_router)
    app.include_router(project_flow_router)
    return app
