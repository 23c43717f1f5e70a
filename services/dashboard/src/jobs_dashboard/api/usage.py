"""``GET /api/usage``: a project's usage per UTC day (docs/flow-control.md, "Usage"): jobs
submitted, attempts, run seconds, succeeded and dead, for its viewers; without ``projectId``,
every project the caller sees."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from jobs_common.api_models import CamelModel
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_common.queue_commands import queue_projects
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_dashboard.adapters.usage import UsageStore

router = APIRouter(prefix="/api/usage", tags=["flow"])

DEFAULT_DAYS = 30
MOST_DAYS = 366


class UsageDay(CamelModel):
    project_id: uuid.UUID
    day: date
    submitted: int
    attempts: int
    run_seconds: float
    succeeded: int
    dead: int


class UsageTotals(CamelModel):
    submitted: int = 0
    attempts: int = 0
    run_seconds: float = 0.0
    succeeded: int = 0
    dead: int = 0


class Usage(CamelModel):
    first_day: date
    last_day: date
    items: list[UsageDay]
    totals: UsageTotals


async def get_usage_store(request: Request) -> UsageStore:
    store: UsageStore = request.app.state.usage
    return store


UsageDep = Annotated[UsageStore, Depends(get_usage_store)]


@router.get(
    "",
    summary="Usage per project and UTC day: jobs submitted, attempts, run seconds, succeeded, dead",
    responses={422: {"description": "from after to, or more than 366 days"}},
)
async def get_usage(
    identity: CurrentIdentity,
    store: UsageDep,
    project_id: Annotated[
        uuid.UUID | None,
        Query(alias="projectId", description="One project (default: every one you see)."),
    ] = None,
    first: Annotated[
        date | None, Query(alias="from", description="First UTC day (default: 29 days before to).")
    ] = None,
    last: Annotated[
        date | None, Query(alias="to", description="Last UTC day (default: today).")
    ] = None,
) -> Usage:
    last = last or datetime.now(UTC).date()
    first = first or last - timedelta(days=DEFAULT_DAYS - 1)
    if first > last:
        raise ValidationFailed(
            "from is after to", details=[ErrorDetail(field="from", message="after to")]
        )
    if (last - first).days >= MOST_DAYS:
        raise ValidationFailed(
            f"at most {MOST_DAYS} days at once",
            details=[ErrorDetail(field="from", message=f"more than {MOST_DAYS} days before to")],
        )
    scope = identity.scope(OrgRole.VIEWER)
    if project_id is not None:
        scope = scope.narrowed_to(project_id)
    rows = await store.days(queue_projects(scope), first, last)
    items = [UsageDay.model_validate(row, from_attributes=True) for row in rows]
    totals = UsageTotals(
        submitted=sum(i.submitted for i in items),
        attempts=sum(i.attempts for i in items),
        run_seconds=sum(i.run_seconds for i in items),
        succeeded=sum(i.succeeded for i in items),
        dead=sum(i.dead for i in items),
    )
    return Usage(first_day=first, last_day=last, items=items, totals=totals)
