"""Jobs: listing, detail, log lines and the retry and cancel commands."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Path, Query
from fastapi.responses import Response
from pydantic import ConfigDict, Field, StringConstraints

from jobs_common.api_models import CamelModel
from jobs_common.auth import Identity
from jobs_common.contracts import TERMINAL_STATUSES, JobStatus
from jobs_common.errors import NotFound
from jobs_common.json_response import JsonResponse
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_dashboard.adapters.jobstore import JobReader, JobRef
from jobs_dashboard.api.deps import (
    CommandsDep,
    CreatedRangeDep,
    OwnVisibilityDep,
    PageDep,
    ReaderDep,
    SettingsDep,
    SubmissionsDep,
    VisibilityDep,
)
from jobs_dashboard.domain.commands import ensure_cancellable, ensure_retryable
from jobs_dashboard.domain.disclosure import job_detail_for, job_summaries_for, log_lines_for
from jobs_dashboard.domain.id_prefix import optional_prefix
from jobs_dashboard.domain.job_snapshot import JobSnapshot, snapshot_of
from jobs_dashboard.domain.models import CancelOutcome, JobDetail, JobsPage, LogPage, RetryAccepted
from jobs_dashboard.domain.query import (
    JobFilters,
    JobListQuery,
    SortDirection,
    SortField,
    Visibility,
    parse_statuses,
    visibility_for,
)
from jobs_dashboard.domain.search import COUNT_LIMIT, MAX_SEARCH_LENGTH, parse_search

router = APIRouter(prefix="/api/jobs", tags=["jobs"])

JobId = Annotated[uuid.UUID, Path(alias="jobId", description="The job's id (uuid).")]
MAX_LOG_LINES = 500
MAX_LOG_LINE_ID = 2**63 - 1  # job_logs.id is a bigint
MAX_STATUS_VALUES = 20
StatusValue = Annotated[str, StringConstraints(max_length=200)]


class CancelBody(CamelModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=1_000)


async def list_query(
    visibility: VisibilityDep,
    created: CreatedRangeDep,
    page: PageDep,
    sort_by: Annotated[SortField, Query(alias="sortBy")] = SortField.CREATED_AT,
    sort_direction: Annotated[SortDirection, Query(alias="sortDirection")] = SortDirection.DESC,
    status: Annotated[
        list[StatusValue] | None,
        Query(
            max_length=MAX_STATUS_VALUES,
            description="Repeatable, or a comma-separated list of job statuses.",
        ),
    ] = None,
    job_type: Annotated[str | None, Query(alias="type", min_length=1, max_length=200)] = None,
    priority: Annotated[int | None, Query(ge=1, le=3)] = None,
    schedule_id: Annotated[
        str | None,
        Query(
            alias="scheduleId",
            max_length=64,
            description="Only this schedule's runs: 8 or more hex digits of its id (as the "
            "console shows ids) or the whole id.",
        ),
    ] = None,
    batch_id: Annotated[
        str | None,
        Query(
            alias="batchId",
            max_length=64,
            description="Only this batch's members: 8 or more hex digits of its id (as the "
            "console shows ids) or the whole id.",
        ),
    ] = None,
    project_id: Annotated[
        uuid.UUID | None,
        Query(alias="projectId", description="Only this project's jobs (docs/tenancy.md)."),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(
            max_length=2_000,
            description="A previous page's nextCursor: the page after it (pageNumber ignored).",
        ),
    ] = None,
    search: Annotated[
        str | None,
        Query(
            max_length=MAX_SEARCH_LENGTH,
            description="A job id prefix (8 or more hex digits) or `payload.<field> = <value>` "
            "(a top-level payload field; docs/api.md, 'Searching jobs').",
        ),
    ] = None,
) -> JobListQuery:
    return JobListQuery.of(
        filters=JobFilters(
            visibility=visibility if project_id is None else visibility.narrowed_to(project_id),
            statuses=parse_statuses(status),
            type=job_type,
            priority=priority,
            created=created,
            schedule_id=optional_prefix(schedule_id, field="scheduleId"),
            batch_id=optional_prefix(batch_id, field="batchId"),
            search=parse_search(search),
        ),
        page=page,
        sort_by=sort_by,
        direction=sort_direction,
        cursor=cursor,
    )


@router.get("", summary="List the jobs of the caller's projects (X-Project or projectId: one)")
async def list_jobs(
    query: Annotated[JobListQuery, Depends(list_query)],
    identity: CurrentIdentity,
    reader: ReaderDep,
) -> JobsPage:
    items, total, cursor = await reader.list_jobs(query)
    capped = query.filters.search is not None and total > COUNT_LIMIT
    shown_total = COUNT_LIMIT if capped else total
    page = JobsPage.of(job_summaries_for(items, identity), shown_total, query.page)
    return page.model_copy(update={"next_cursor": cursor, "total_capped": capped})


@router.get("/{jobId}", summary="A job with its attempts, timeline, parents and dead letter")
async def get_job(job_id: JobId, identity: CurrentIdentity, reader: ReaderDep) -> JobDetail:
    detail = await reader.get_job(job_id, visibility_for(identity))
    if detail is None:
        raise NotFound(f"job {job_id} not found")
    return job_detail_for(detail, identity)


@router.get(
    "/{jobId}/snapshot",
    summary="A job page's read: the job as one snapshot, accepted (not recorded yet) or not found",
)
async def get_job_snapshot(
    job_id: JobId, identity: CurrentIdentity, reader: ReaderDep, submissions: SubmissionsDep
) -> JobSnapshot:
    """200 in every case: `state` says whether `job` holds the job (its header, attempts,
    timeline and result from one transaction), the submission service accepted it a moment ago
    and the scheduler has not recorded it yet, or no such job is visible to the caller."""
    detail = await reader.get_job(job_id, visibility_for(identity))
    if detail is not None:
        return snapshot_of(job_detail_for(detail, identity), accepted=None)
    return snapshot_of(None, accepted=await submissions.accepted(job_id, identity=identity))


@router.get("/{jobId}/logs", summary="Log lines the job's handler wrote, oldest first")
async def job_logs(
    job_id: JobId,
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    reader: ReaderDep,
    after_id: Annotated[int, Query(alias="afterId", ge=0, le=MAX_LOG_LINE_ID)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_LOG_LINES)] = 100,
) -> LogPage:
    lines = await reader.job_logs(job_id, visibility, after_id=after_id, limit=limit)
    if lines is None:
        raise NotFound(f"job {job_id} not found")
    return LogPage(
        items=log_lines_for(lines, identity), next_after_id=lines[-1].id if lines else after_id
    )


@router.post(
    "/{jobId}/retry",
    status_code=202,
    summary="Ask the scheduler to run a dead job again",
    responses={404: {"description": "Unknown job"}, 409: {"description": "Job is not dead"}},
)
async def retry_job(
    job_id: JobId, identity: CurrentIdentity, reader: ReaderDep, commands: CommandsDep
) -> RetryAccepted:
    ref = await reader.job_ref(job_id, visibility_for(identity))
    if ref is None:
        raise NotFound(f"job {job_id} not found")
    may_act(identity, ref, to="retry jobs")
    ensure_retryable(ref.status)
    await commands.request_retry(job_id=job_id, requested_by=identity.actor, trace_id=ref.trace_id)
    return RetryAccepted(job_id=job_id)


def may_act(identity: Identity, ref: JobRef, *, to: str) -> None:
    """A job's commands take a member (or above) of its project: 403 for a viewer."""
    if ref.project_id is not None:
        identity.require(
            str(ref.project_id), OrgRole.MEMBER, to=to, missing=f"job {ref.job_id} not found"
        )


async def wait_until_recorded(
    reader: JobReader, job_id: uuid.UUID, visibility: Visibility, *, wait: float, interval: float
) -> JobRef | None:
    """The job's reference once the scheduler has recorded it, or None after ``wait``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while (ref := await reader.job_ref(job_id, visibility)) is None:
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(min(interval, max(0.0, deadline - loop.time())))
    return ref


async def wait_until_cancelled(
    reader: JobReader, job_id: uuid.UUID, *, wait: float, interval: float
) -> bool:
    """Poll the job's status until it is cancelled (True), ends otherwise or time runs out."""
    terminal = {s.value for s in TERMINAL_STATUSES}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while True:
        status = await reader.job_status(job_id)
        if status == JobStatus.CANCELLED.value:
            return True
        if status is None or status in terminal or loop.time() >= deadline:
            return False
        await asyncio.sleep(min(interval, max(0.0, deadline - loop.time())))


@router.post(
    "/{jobId}/cancel",
    summary="Cancel a job: at once unless it runs; a running one is stopped by its worker",
    response_model=CancelOutcome,
    responses={
        200: {"description": "The scheduler cancelled the job", "model": CancelOutcome},
        202: {"description": "Cancel requested; the job still runs", "model": CancelOutcome},
        404: {"description": "Unknown job"},
        409: {"description": "Job is already finished"},
    },
)
async def cancel_job(
    job_id: JobId,
    identity: CurrentIdentity,
    reader: ReaderDep,
    commands: CommandsDep,
    settings: SettingsDep,
    submissions: SubmissionsDep,
    body: Annotated[CancelBody | None, Body()] = None,
) -> Response:
    visibility = visibility_for(identity)
    ref = await reader.job_ref(job_id, visibility)
    # Not recorded yet: wait for the scheduler only for a job accepted a moment ago (an id
    # nobody submitted is a 404 at once, not after the wait).
    if ref is None and await submissions.accepted(job_id, identity=identity) is not False:
        ref = await wait_until_recorded(
            reader,
            job_id,
            visibility,
            wait=settings.cancel_record_wait_seconds,
            interval=settings.cancel_poll_interval_seconds,
        )
    if ref is None:
        raise NotFound(f"job {job_id} not found")
    may_act(identity, ref, to="cancel jobs")
    ensure_cancellable(ref.status)
    await commands.request_cancel(
        job_id=job_id,
        requested_by=identity.actor,
        reason=None if body is None else body.reason,
        trace_id=ref.trace_id,
    )
    cancelled = await wait_until_cancelled(
        reader,
        job_id,
        wait=settings.cancel_wait_seconds,
        interval=settings.cancel_poll_interval_seconds,
    )
    outcome = CancelOutcome(job_id=job_id, status="cancelled" if cancelled else "cancel_requested")
    return JsonResponse(
        outcome.model_dump(mode="json", by_alias=True), status_code=200 if cancelled else 202
    )
