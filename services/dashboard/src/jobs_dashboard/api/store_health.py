"""The job store's vacuum health (admins): the console's store health card."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import APIRouter, Depends, Request

from jobs_dashboard.adapters.store_health import StoreHealthReads
from jobs_dashboard.api.deps import AdminDep, SettingsDep
from jobs_dashboard.domain.store_health import StoreHealth, StoreThreshold, judge

router = APIRouter(prefix="/api/store", tags=["store"])


async def get_store_health_reads(request: Request) -> StoreHealthReads:
    return cast(StoreHealthReads, request.app.state.store_health)


StoreHealthDep = Annotated[StoreHealthReads, Depends(get_store_health_reads)]


@router.get(
    "/health",
    summary="The job store's health (admins only): autovacuum on or off, dead and live rows "
    "per table, the last vacuum and analyze, and a verdict with its warnings",
    responses={403: {"description": "Not an admin: the store's upkeep is the operator's"}},
)
async def store_health(_: AdminDep, reads: StoreHealthDep, settings: SettingsDep) -> StoreHealth:
    now, server_autovacuum, stats = await reads.catalog()
    threshold = StoreThreshold(
        dead_rows=settings.store_dead_rows_warning,
        dead_ratio=settings.store_dead_ratio_warning,
    )
    return judge(stats, server_autovacuum=server_autovacuum, threshold=threshold, checked_at=now)
