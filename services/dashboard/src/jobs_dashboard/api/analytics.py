"""Job analytics within the caller's visibility."""

from __future__ import annotations

from fastapi import APIRouter

from jobs_dashboard.api.deps import CreatedRangeDep, ReaderDep, VisibilityDep
from jobs_dashboard.domain.models import JobAnalytics

router = APIRouter(prefix="/api/jobs", tags=["analytics"])


@router.get("/analytics", summary="Counts, success rate, runtime and throughput")
async def job_analytics(
    visibility: VisibilityDep, created: CreatedRangeDep, reader: ReaderDep
) -> JobAnalytics:
    return await reader.analytics(visibility, created)
