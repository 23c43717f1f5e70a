"""The FastAPI application factory; the lifespan owns every connection and background task."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
from fastapi import FastAPI, Request
from pymongo.errors import ConnectionFailure

from jobs_common.body_limit import BodyLimitMiddleware
from jobs_common.error_handlers import install_error_handlers
from jobs_common.errors import UpstreamUnavailable
from jobs_common.fast_routes import install_fast_routes
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.json_response import JsonResponse
from jobs_common.mongo import create_client
from jobs_common.ops_routes import add_ops_routes
from jobs_common.periodic import BackgroundLoops
from jobs_common.recipients import RecipientAllowList
from jobs_common.request_context import LogContextMiddleware
from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.job_types import JobTypeStore
from jobs_submission.adapters.mongo import SubmissionStore, has_ttl_monitor
from jobs_submission.adapters.project_quotas import ProjectQuotas
from jobs_submission.adapters.quota import QuotaStore
from jobs_submission.adapters.rabbit import BrokerUnavailable, BusHolder
from jobs_submission.api.batches import build_batch_router
from jobs_submission.api.job_types import build_job_types_router, build_payload_check_router
from jobs_submission.api.limits import body_limits
from jobs_submission.api.routes import build_router, fast_routes
from jobs_submission.app.acceptance import Acceptance
from jobs_submission.app.batches import BatchService
from jobs_submission.app.expiry import INTERVAL_SECONDS, Expiry
from jobs_submission.app.relay import OutboxRelay
from jobs_submission.app.submissions import SubmissionService
from jobs_submission.app.type_registry import TypeRegistry
from jobs_submission.domain.quota import EmailPolicy, EmailQuota
from jobs_submission.settings import Settings

log = logging.getLogger(__name__)


def email_policy(settings: Settings) -> EmailPolicy:
    return EmailPolicy(
        quota=EmailQuota(
            limit=settings.email_quota,
            window_seconds=settings.email_quota_window_seconds,
            exempt_admins=settings.email_quota_exempt_admins,
        ),
        allowed=RecipientAllowList.of(settings.email_allowed_recipients),
    )


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        client = create_client(settings.mongo_url)
        store = SubmissionStore(client, settings.mongo_db)
        batches = BatchStore(store)
        quotas = QuotaStore(client, settings.mongo_db)
        bus = BusHolder(settings.amqp_url, name="submission")
        relay = OutboxRelay(store=store, bus=bus, settings=settings)
        job_types = JobTypeStore(client, settings.mongo_db)
        types = TypeRegistry(
            job_types,
            bus,
            refresh_seconds=settings.types_refresh_seconds,
            worker_interval=settings.worker_types_interval_seconds,
        )
        loops = BackgroundLoops()
        scheduler = httpx.AsyncClient(timeout=httpx.Timeout(1.0))
        project_quotas = (
            ProjectQuotas(
                scheduler,
                settings.scheduler_urls,
                internal_token=settings.internal_token,
                refresh=settings.project_quota_refresh_seconds,
                idle_refresh=settings.project_quota_idle_seconds,
            )
            if settings.scheduler_urls
            else None
        )
        try:
            retention = timedelta(days=settings.retention_days)
            monitor = await has_ttl_monitor(store.db)
            await store.ensure_indexes(retention, ttl_monitor=monitor)
            await batches.ensure_indexes(retention, ttl_monitor=monitor)
            if not monitor and retention:
                log.info(
                    "no TTL monitor on this MongoDB server: the service expires documents",
                    extra={"action": "expiry", "retention_days": settings.retention_days},
                )
                expiry = Expiry(store, batches, retention)
                # At start too: a service back from a downtime expires what fell due meanwhile.
                loops.start(INTERVAL_SECONDS, expiry.run_once, name="expire", at_once=True)
            await quotas.ensure_indexes()
            await job_types.ensure_indexes()
            try:
                await bus.get()
            except BrokerUnavailable:
                log.warning(
                    "broker unavailable at start; accepting jobs, relay connects later",
                    extra={"action": "broker_down_at_start"},
                )
            app.state.store = store
            app.state.bus = bus
            app.state.relay = relay
            app.state.types = types
            on_accepted = relay.wake if settings.relay_enabled else lambda: None
            handoff = relay.handoff if settings.relay_enabled and settings.relay_handoff else None
            email = email_policy(settings)
            acceptance = Acceptance(
                on_accepted=on_accepted,
                handoff=handoff,
                quotas=quotas,
                email=email,
                types=types,
                project_quotas=project_quotas,
            )
            app.state.submissions = SubmissionService(
                store, acceptance, insert_batch_max=settings.insert_batch_max
            )
            app.state.batches = BatchService(
                store,
                batches,
                acceptance,
                claim_lease_ms=int(settings.relay_claim_lease_seconds * 1000),
            )
            if settings.relay_enabled:
                relay.start()
            types.start()
            log.info("submission service started", extra={"action": "startup"})
            yield
        finally:
            await loops.stop()
            await types.stop()
            await relay.stop()
            await bus.close()
            await client.close()
            await scheduler.aclose()

    app = FastAPI(
        title="jobs-submission",
        version="0.1.0",
        description="Accepts jobs, stores them in MongoDB and relays them to the scheduler.",
        lifespan=lifespan,
    )
    app.state.internal_token = settings.internal_token
    app.state.previous_internal_tokens = settings.previous_internal_tokens
    install_error_handlers(app)
    install_store_unavailable_handler(app)
    app.add_middleware(BodyLimitMiddleware, limits=body_limits(settings))
    install_fast_routes(app, fast_routes())  # innermost
    app.add_middleware(LogContextMiddleware)
    app.add_middleware(HttpMetricsMiddleware)

    async def ready() -> dict[str, bool]:
        store: SubmissionStore | None = getattr(app.state, "store", None)
        bus: BusHolder | None = getattr(app.state, "bus", None)
        relay: OutboxRelay | None = getattr(app.state, "relay", None)
        return {
            "mongo": store is not None and await store.ping(),
            "broker": bus is not None and bus.connected,
            "relay": relay is not None and (relay.alive or not settings.relay_enabled),
        }

    async def live() -> dict[str, bool]:
        # Not the broker or MongoDB being away: jobs are still accepted then (the outbox).
        bus: BusHolder | None = getattr(app.state, "bus", None)
        relay: OutboxRelay | None = getattr(app.state, "relay", None)
        types: TypeRegistry | None = getattr(app.state, "types", None)
        return {
            "broker_channel": bus is None or not bus.broken,
            "relay": relay is None or relay.alive or not settings.relay_enabled,
            "job_types": types is None or types.alive,
        }

    add_ops_routes(app, ready, live=live, settings=settings)
    app.include_router(build_router())
    app.include_router(build_batch_router())
    app.include_router(build_job_types_router())
    app.include_router(build_payload_check_router())
    return app


def install_store_unavailable_handler(app: FastAPI) -> None:
    """MongoDB unreachable (down, failing over, a dropped connection): 503 with Retry-After,
    not a 500. Nothing was stored; the client sends the request again (with its
    Idempotency-Key, so a write that did land is answered as a replay)."""

    @app.exception_handler(ConnectionFailure)
    async def _store_unavailable(_: Request, exc: ConnectionFailure) -> JsonResponse:
        log.warning(
            "MongoDB unavailable", extra={"action": "store_unavailable", "error": repr(exc)}
        )
        error = UpstreamUnavailable("the job store is unavailable; retry later")
        return JsonResponse(error.envelope(), status_code=503, headers={"Retry-After": "1"})
