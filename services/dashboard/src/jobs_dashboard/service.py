"""The dashboard app: ``create_app(settings)``; the lifespan opens and closes every resource."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.body_limit import BodyLimitMiddleware
from jobs_common.db import create_engine
from jobs_common.error_handlers import install_error_handlers
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.ops_routes import add_ops_routes
from jobs_common.rabbit import Publisher, RabbitBus
from jobs_common.request_context import LogContextMiddleware
from jobs_dashboard.adapters.analytics import UnfinishedCounts
from jobs_dashboard.adapters.charts import ChartStore
from jobs_dashboard.adapters.commands import CommandPublisher
from jobs_dashboard.adapters.dead_letters import DeadLetterStore
from jobs_dashboard.adapters.gauge_reads import GaugeReads
from jobs_dashboard.adapters.job_types import SubmissionTypes
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.adapters.project_flow import ProjectFlowStore
from jobs_dashboard.adapters.queues import QueueStore
from jobs_dashboard.adapters.registry import RegistryStore
from jobs_dashboard.adapters.scheduler_api import SchedulerApi
from jobs_dashboard.adapters.schedules import ScheduleStore
from jobs_dashboard.adapters.store_health import StoreHealthReads
from jobs_dashboard.adapters.submission_records import SubmissionRecords
from jobs_dashboard.adapters.usage import UsageStore
from jobs_dashboard.adapters.worker_control import WorkerControlPublisher
from jobs_dashboard.adapters.workers import WorkerStore
from jobs_dashboard.api import (
    analytics,
    dead_letters,
    jobs,
    project_flow,
    queues,
    registry,
    schedules,
    store_health,
    usage,
    workers,
)
from jobs_dashboard.api.limits import body_limits
from jobs_dashboard.app.gauges import PlatformGauges
from jobs_dashboard.settings import Settings

log = logging.getLogger(__name__)


async def dispose(engines: Iterable[AsyncEngine]) -> None:
    for engine in engines:
        await engine.dispose()


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(settings.database_url, pool_size=settings.db_pool_size)
        # Snapshot reads on a hot standby when one is named (docs/scaling.md); else None:
        # every store reads where it writes.
        read_engine = (
            None
            if settings.database_read_url is None
            else create_engine(settings.database_read_url, pool_size=settings.db_pool_size)
        )
        engines = [engine] if read_engine is None else [engine, read_engine]
        try:
            bus = await RabbitBus.open(settings.amqp_url, name="dashboard")
        except BaseException:
            await dispose(engines)
            raise
        app.state.reader = JobReader(engine, read_engine=read_engine)
        app.state.dead_letters = DeadLetterStore(engine, read_engine=read_engine)
        app.state.schedules = ScheduleStore(engine, read_engine=read_engine)
        app.state.queues = QueueStore(engine, read_engine=read_engine)
        app.state.project_flow = ProjectFlowStore(engine, read_engine=read_engine)
        app.state.usage = UsageStore(engine, read_engine=read_engine)
        app.state.registry = RegistryStore(engine, read_engine=read_engine)
        app.state.charts = ChartStore(engine, read_engine=read_engine)
        app.state.unfinished = UnfinishedCounts(engine, read_engine=read_engine)
        app.state.workers = WorkerStore(engine, read_engine=read_engine)
        app.state.store_health = StoreHealthReads(engine)
        submission = httpx.AsyncClient(
            base_url=settings.submission_url, timeout=settings.submission_timeout_seconds
        )
        app.state.types = SubmissionTypes(submission, internal_token=settings.internal_token)
        app.state.submissions = SubmissionRecords(
            submission, internal_token=settings.internal_token
        )
        scheduler = httpx.AsyncClient(timeout=settings.scheduler_timeout_seconds)
        app.state.scheduler = SchedulerApi(
            scheduler, settings.scheduler_urls, internal_token=settings.internal_token
        )
        app.state.commands = CommandPublisher(
            bus.publisher, timeout=settings.publish_timeout_seconds
        )
        app.state.worker_control = WorkerControlPublisher(
            Publisher(bus.topology.events), timeout=settings.publish_timeout_seconds
        )
        app.state.bus = bus
        gauges = PlatformGauges(
            registry=app.state.registry,
            workers=app.state.workers,
            reads=GaugeReads(engine, read_engine=read_engine),
            bus=bus,
            interval=settings.gauge_refresh_interval_seconds,
            rate_window=settings.drain_rate_window_seconds,
            worker_dead_after=settings.worker_dead_after_seconds,
            horizon_stale_after=settings.horizon_stale_seconds,
        )
        gauges.start()
        app.state.gauges = gauges
        log.info("dashboard started", extra={"action": "startup"})
        try:
            yield
        finally:
            await gauges.stop()
            app.state.bus = None
            await submission.aclose()
            await scheduler.aclose()
            await bus.close()
            await dispose(engines)
            log.info("dashboard stopped", extra={"action": "shutdown"})

    app = FastAPI(
        title="Jobs dashboard",
        version="0.1.0",
        description="Read API over the job store, operator commands, dead letters, schedules.",
        lifespan=lifespan,
    )
    app.state.internal_token = settings.internal_token
    app.state.previous_internal_tokens = settings.previous_internal_tokens
    app.state.settings = settings
    app.state.reader = None
    app.state.commands = None
    app.state.bus = None
    install_error_handlers(app)
    app.add_middleware(BodyLimitMiddleware, limits=body_limits(settings))
    app.add_middleware(LogContextMiddleware)
    app.add_middleware(HttpMetricsMiddleware)

    async def answers(ping: Callable[[], Awaitable[None]], check: str) -> bool:
        try:
            async with asyncio.timeout(settings.ready_timeout_seconds):
                await ping()
        except Exception:
            log.warning(
                "database not ready",
                extra={"action": "ready_check", "check": check},
                exc_info=True,
            )
            return False
        return True

    async def ready() -> dict[str, bool]:
        reader: JobReader | None = app.state.reader
        bus: RabbitBus | None = app.state.bus
        # The standby is checked too when snapshots read there: a dashboard whose reads fail
        # is not ready, whichever server is away.
        names = ["database"]
        if settings.database_read_url is not None:
            names.append("database_replica")
        checks = dict.fromkeys(names, False)
        if reader is not None:
            pings = {"database": reader.ping, "database_replica": reader.ping_reads}
            found = await asyncio.gather(*(answers(pings[name], name) for name in names))
            checks = dict(zip(names, found, strict=True))
        broker = bus is not None and not bus.connection.is_closed and not bus.channel.is_closed
        return {**checks, "broker": broker}

    async def live() -> dict[str, bool]:
        # Not the broker being away: reads are still served then.
        bus: RabbitBus | None = app.state.bus
        return {"broker_channel": bus is None or not bus.channel_broken}

    add_ops_routes(app, ready, live=live, settings=settings)
    # analytics first: /api/jobs/analytics must not be captured by /api/jobs/{jobId}.
    app.include_router(analytics.router)
    app.include_router(jobs.router)
    app.include_router(dead_letters.router)
    app.include_router(schedules.router)
    app.include_router(queues.router)
    app.include_router(project_flow.router)
    app.include_router(usage.router)
    app.include_router(registry.policies)
    app.include_router(workers.router)
    app.include_router(registry.queue_depths)
    app.include_router(registry.batches)
    app.include_router(store_health.router)
    return app
