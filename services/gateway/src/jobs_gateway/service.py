"""The gateway app factory: wait for PostgreSQL, migrate, seed, then serve."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import sqlalchemy as sa
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from sqlalchemy.ext.asyncio import AsyncEngine
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from jobs_common.api_models import REPLAYED_HEADER
from jobs_common.body_limit import BodyLimitMiddleware
from jobs_common.db import create_engine
from jobs_common.error_handlers import install_error_handlers
from jobs_common.fast_routes import install_fast_routes
from jobs_common.http_metrics import HttpMetricsMiddleware
from jobs_common.ops_routes import add_ops_routes
from jobs_gateway.adapters.live import LiveEventsConsumer
from jobs_gateway.adapters.project_jobs import ProjectJobs
from jobs_gateway.adapters.seed import seed_demo_team, seed_demo_users
from jobs_gateway.adapters.upstream import Upstreams, build_client
from jobs_gateway.api import api_keys, audit, auth, events, proxy, tenancy
from jobs_gateway.api.limits import body_limits
from jobs_gateway.api.middleware import RequestContextMiddleware
from jobs_gateway.api.openapi import install_docs, install_public_openapi
from jobs_gateway.api.ui import install_ui
from jobs_gateway.app.auth_services import AuthServices
from jobs_gateway.app.live_hub import LiveHub
from jobs_gateway.domain.headers import REQUEST_ID_HEADER, TRACE_ID_HEADER
from jobs_gateway.domain.live import LiveLimits
from jobs_gateway.domain.routing import UPSTREAMS
from jobs_gateway.migrate import upgrade_async
from jobs_gateway.settings import Settings

log = logging.getLogger(__name__)


async def wait_for_database(engine: AsyncEngine, *, within: float) -> None:
    """Poll until PostgreSQL answers (start-up order: dependencies first)."""
    deadline = time.monotonic() + within
    delay = 0.2
    while True:
        try:
            async with engine.connect() as connection:
                await connection.execute(sa.text("SELECT 1"))
            return
        except Exception as exc:
            if time.monotonic() >= deadline:
                raise RuntimeError("PostgreSQL did not answer in time") from exc
            log.warning(
                "waiting for PostgreSQL", extra={"action": "wait_database", "error": repr(exc)}
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(settings.database_url, pool_size=settings.db_pool_size)
        client = build_client(
            timeout=settings.upstream_timeout_seconds,
            connect_timeout=settings.upstream_connect_timeout_seconds,
            max_connections=settings.upstream_max_connections,
        )
        # Live events (GET /ws/events): the hub, fed by this replica's own broker queue.
        hub = LiveHub(
            LiveLimits(
                send_queue_size=settings.ws_send_queue_size,
                max_subscriptions=settings.ws_max_subscriptions,
                max_message_bytes=settings.ws_max_message_bytes,
                close_timeout_seconds=settings.ws_close_timeout_seconds,
            )
        )
        live_events = LiveEventsConsumer(
            url=settings.amqp_url,
            sink=hub,
            max_length=settings.live_queue_max_length,
            unbind_after=settings.live_unbind_after_seconds,
        )
        auth_services: AuthServices | None = None
        try:
            await wait_for_database(engine, within=settings.startup_timeout_seconds)
            if settings.migrate_on_start:
                await upgrade_async(settings.database_url)
            auth_services = AuthServices.build(settings, engine)
            if settings.seeds_demo_users:
                await seed_demo_users(auth_services.users, auth_services.passwords)
                await seed_demo_team(
                    auth_services.users, auth_services.passwords, auth_services.tenancy.store
                )
            app.state.accounts = auth_services.accounts
            app.state.sessions = auth_services.sessions
            app.state.api_rate_limit = auth_services.api_rate_limit
            app.state.tenancy = auth_services.tenancy
            app.state.api_keys = auth_services.api_keys
            app.state.project_scopes = auth_services.project_scopes
            auth_services.start()  # the /api limit's flush and the purge, in the background
            app.state.upstreams = Upstreams(
                client,
                {"submission": settings.submission_url, "dashboard": settings.dashboard_url},
            )
            app.state.project_jobs = ProjectJobs(
                app.state.upstreams, internal_token=settings.internal_token
            )
            app.state.live_hub = hub
            app.state.live_events = live_events
            live_events.start()  # in the background: the broker is not needed to serve HTTP
            events.redact_tokens_in_server_logs()
            log.info("gateway started", extra={"action": "startup", "port": settings.port})
            yield
        finally:
            if auth_services is not None:
                await auth_services.stop()
            hub.close_all()
            await live_events.stop()
            await client.aclose()
            await engine.dispose()

    app = FastAPI(
        title="Jobs gateway",
        version="0.1.0",
        description="The public HTTP entry: authentication and the proxied job API.",
        lifespan=lifespan,
        docs_url=None,  # install_docs: Swagger UI with its assets served here, not from a CDN
        redoc_url=None,  # FastAPI's would load Redoc from a CDN: /docs is the one API page
    )
    app.state.internal_token = settings.internal_token
    app.state.settings = settings
    install_error_handlers(app)
    install_public_openapi(app)
    install_docs(app)

    async def ready() -> dict[str, bool]:
        async def database() -> bool:
            try:
                await asyncio.wait_for(
                    app.state.accounts.users.ping(), timeout=settings.ready_timeout_seconds
                )
            except Exception:
                return False
            return True

        upstreams: Upstreams = app.state.upstreams
        within = settings.ready_timeout_seconds
        results = await asyncio.gather(
            database(), *(upstreams.healthy(name, within=within) for name in UPSTREAMS)
        )
        return dict(zip(("database", *UPSTREAMS), results, strict=True))

    async def live() -> dict[str, bool]:
        # The live events consumer: connecting (the broker away) or consuming, never stuck
        # connected without its queue consumed. The API itself needs no broker.
        live_events: LiveEventsConsumer | None = getattr(app.state, "live_events", None)
        return {"live_events": live_events is None or live_events.alive}

    # Metrics: GATEWAY_METRICS_PORT (metrics_server), not this port.
    add_ops_routes(app, ready, live=live, settings=settings, metrics=False)
    app.include_router(auth.router)
    app.include_router(tenancy.router)  # before the proxy: the gateway serves these itself
    app.include_router(api_keys.router)
    app.include_router(audit.router)
    app.include_router(proxy.router)
    install_ui(app, settings.ui_dir)  # last: it answers what the other routes leave
    app.include_router(events.router)
    install_fast_routes(app, proxy.fast_routes())  # innermost
    app.add_middleware(BodyLimitMiddleware, limits=body_limits(settings))
    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,
        allow_credentials=True,
        allow_methods=["*"],
        allow_headers=["*"],
        # 429s say when; a replayed submission says so
        expose_headers=[REQUEST_ID_HEADER, TRACE_ID_HEADER, "Retry-After", REPLAYED_HEADER],
    )
    app.add_middleware(RequestContextMiddleware)
    app.add_middleware(HttpMetricsMiddleware)  # counts what the others answer too
    if settings.trusted_proxies:  # outermost: every layer sees the client, not the proxy
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.trusted_proxies)
    return app
