"""Job analytics within the caller's visibility: the totals and series from the rollups, the
charts over a chosen range (docs/dashboard.md, "Charts") and the overview's figures of now."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Annotated, cast

from fastapi import APIRouter, Depends, Query, Request

from jobs_common.errors import NotFound
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_dashboard.adapters.analytics import UnfinishedCounts
from jobs_dashboard.adapters.charts import ChartScope, ChartStore
from jobs_dashboard.api.deps import (
    CreatedRangeDep,
    OwnVisibilityDep,
    ReaderDep,
    SettingsDep,
    VisibilityDep,
)
from jobs_dashboard.api.queues import QueuesDep
from jobs_dashboard.api.workers import WorkersDep
from jobs_dashboard.domain.charts import PLANS, ChartRange, ChartSeries, chart_point
from jobs_dashboard.domain.live_figures import LiveFigures, worker_slots
from jobs_dashboard.domain.models import JobAnalytics, JobSeries

router = APIRouter(prefix="/api/jobs", tags=["analytics"])


async def get_charts(request: Request) -> ChartStore:
    return cast(ChartStore, request.app.state.charts)


async def get_unfinished(request: Request) -> UnfinishedCounts:
    return cast(UnfinishedCounts, request.app.state.unfinished)


ChartsDep = Annotated[ChartStore, Depends(get_charts)]
UnfinishedDep = Annotated[UnfinishedCounts, Depends(get_unfinished)]


@router.get("/analytics", summary="Counts, success rate, runtime and throughput")
async def job_analytics(
    visibility: VisibilityDep, created: CreatedRangeDep, reader: ReaderDep
) -> JobAnalytics:
    return await reader.analytics(visibility, created)


@router.get("/analytics/series", summary="Jobs created per time window, by how they ended")
async def job_series(
    visibility: VisibilityDep,
    reader: ReaderDep,
    bucket_minutes: Annotated[int, Query(alias="bucketMinutes", ge=1, le=1440)] = 5,
    buckets: Annotated[int, Query(ge=1, le=288)] = 12,
) -> JobSeries:
    return await reader.series(visibility, bucket_minutes=bucket_minutes, buckets=buckets)


@router.get(
    "/analytics/charts",
    summary="Throughput and failures per window, queue depth and longest wait by priority, "
    "worker utilisation (admins), over a chosen range, from the chart rollups",
    responses={404: {"description": "A queueId the caller does not see"}},
)
async def job_charts(
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    charts: ChartsDep,
    queues: QueuesDep,
    settings: SettingsDep,
    chart_range: Annotated[
        ChartRange,
        Query(
            alias="range",
            description="15m and 1h: a point a minute; 6h: per 5 minutes; 24h: per 15 "
            "minutes; 7d: per hour.",
        ),
    ] = ChartRange.H1,
    queue_id: Annotated[
        uuid.UUID | None,
        Query(alias="queueId", description="One queue (its id, as GET /api/queues gives it)."),
    ] = None,
) -> ChartSeries:
    queue = None
    if queue_id is not None:
        view = await queues.get(queue_id, identity.scope(OrgRole.VIEWER))
        if view is None:
            raise NotFound(f"queue {queue_id} not found")
        queue = (view.project_id, view.name)
    plan = PLANS[chart_range]
    first, windows = await charts.windows(plan, ChartScope(visibility, queue))
    fleet = identity.is_admin and queue is None
    return ChartSeries(
        range=chart_range,
        bucket_seconds=int(plan.step.total_seconds()),
        first=first,
        points=[chart_point(start, sums, fleet=fleet) for start, sums in windows.items()],
        project_id=None if queue is None else queue[0],
        queue=None if queue is None else queue[1],
        grafana_url=settings.grafana_url,
        rabbitmq_console_url=settings.rabbitmq_console_url if identity.is_admin else None,
    )


@router.get(
    "/analytics/now",
    summary="The caller's unfinished jobs by status now and, for admins, the workers' busy "
    "and total slots as the Workers page lists them",
)
async def live_figures(
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    unfinished: UnfinishedDep,
    workers: WorkersDep,
    settings: SettingsDep,
) -> LiveFigures:
    at, counts = await unfinished.now(visibility)
    slots = None
    if identity.is_admin:
        listing = await workers.workers(
            dead_after=timedelta(seconds=settings.worker_dead_after_seconds),
            include_dead_minutes=0,
            horizon_stale_after=timedelta(seconds=settings.horizon_stale_seconds),
        )
        slots = worker_slots(listing)
    return LiveFigures(at=at, unfinished_by_status=counts, workers=slots)
