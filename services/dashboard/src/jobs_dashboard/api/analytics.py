"""Job analytics within the caller's visibility."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from jobs_dashboard.api.deps import CreatedRangeDep, ReaderDep, VisibilityDep
from jobs_dashboard.domain.models import JobAnalytics, JobSeries

router = APIRouter(prefix="/api/jobs", tags=["analytics"])


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
