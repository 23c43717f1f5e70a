"""Jobs: listing, detail and the retry command."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from jobs_common.errors import NotFound
from jobs_common.http import CurrentIdentity
from jobs_dashboard.api.deps import CommandsDep, CreatedRangeDep, ReaderDep, VisibilityDep
from jobs_dashboard.domain.commands import ensure_retryable
from jobs_dashboard.domain.models import JobDetail, JobsPage, RetryAccepted
from jobs_dashboard.domain.query import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    JobFilters,
    JobListQuery,
    PageRequest,
    SortDirection,
    SortField,
    Visibility,
    parse_statuses,
    total_pages,
)

router = APIRouter(prefix="/api/jobs", tags=["jobs"])

JobId = Annotated[uuid.UUID, Path(alias="jobId", description="The job's id (uuid).")]


def list_query(
    visibility: VisibilityDep,
    created: CreatedRangeDep,
    page_number: Annotated[int, Query(alias="pageNumber", ge=1)] = 1,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    sort_by: Annotated[SortField, Query(alias="sortBy")] = SortField.CREATED_AT,
    sort_direction: Annotated[SortDirection, Query(alias="sortDirection")] = SortDirection.DESC,
    status: Annotated[
        list[str] | None,
        Query(description="Repeatable, or a comma-separated list of job statuses."),
    ] = None,
    job_type: Annotated[str | None, Query(alias="type", min_length=1, max_length=200)] = None,
    priority: Annotated[int | None, Query(ge=1, le=3)] = None,
) -> JobListQuery:
    return JobListQuery(
        filters=JobFilters(
            visibility=visibility,
            statuses=parse_statuses(status),
            type=job_type,
            priority=priority,
            created=created,
        ),
        page=PageRequest(page_number, page_size),
        sort_by=sort_by,
        direction=sort_direction,
    )


@router.get("", summary="List jobs (a user sees their own, an admin all)")
async def list_jobs(
    query: Annotated[JobListQuery, Depends(list_query)], reader: ReaderDep
) -> JobsPage:
    items, total = await reader.list_jobs(query)
    return JobsPage(
        items=items,
        page_number=query.page.page_number,
        page_size=query.page.page_size,
        total_items=total,
        total_pages=total_pages(total, query.page.page_size),
    )


@router.get("/{jobId}", summary="A job with its attempts, timeline and open dead letter")
async def get_job(job_id: JobId, identity: CurrentIdentity, reader: ReaderDep) -> JobDetail:
    detail = await reader.get_job(job_id, Visibility.for_identity(identity))
    if detail is None:
        raise NotFound(f"job {job_id} not found")
    return detail


@router.post(
    "/{jobId}/retry",
    status_code=202,
    summary="Ask the scheduler to run a dead job again",
    responses={404: {"description": "Unknown job"}, 409: {"description": "Job is not dead"}},
)
async def retry_job(
    job_id: JobId, identity: CurrentIdentity, reader: ReaderDep, commands: CommandsDep
) -> RetryAccepted:
    ref = await reader.job_ref(job_id, Visibility.for_identity(identity))
    if ref is None:
        raise NotFound(f"job {job_id} not found")
    ensure_retryable(ref.status)
    await commands.request_retry(job_id=job_id, requested_by=identity.email, trace_id=ref.trace_id)
    return RetryAccepted(job_id=job_id)
