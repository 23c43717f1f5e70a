"""FastAPI dependencies as Annotated aliases."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Query, Request

from jobs_common.errors import Forbidden
from jobs_common.request_identity import CurrentIdentity
from jobs_dashboard.adapters.commands import CommandPublisher
from jobs_dashboard.adapters.dead_letters import DeadLetterStore
from jobs_dashboard.adapters.job_types import SubmissionTypes
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.adapters.registry import RegistryStore
from jobs_dashboard.adapters.scheduler_api import SchedulerApi
from jobs_dashboard.adapters.schedules import ScheduleStore
from jobs_dashboard.adapters.submission_records import SubmissionRecords
from jobs_dashboard.domain.query import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    CreatedRange,
    IsoDateTime,
    PageRequest,
    Visibility,
    visibility_for,
)
from jobs_dashboard.settings import Settings

__all__ = [
    "AdminDep",
    "CommandsDep",
    "CreatedRangeDep",
    "CurrentIdentity",
    "DeadLettersDep",
    "OwnVisibilityDep",
    "PageDep",
    "ReaderDep",
    "RegistryDep",
    "SchedulerDep",
    "SchedulesDep",
    "SettingsDep",
    "SubmissionsDep",
    "TypesDep",
    "VisibilityDep",
]


async def get_reader(request: Request) -> JobReader:
    return cast(JobReader, request.app.state.reader)


async def get_commands(request: Request) -> CommandPublisher:
    return cast(CommandPublisher, request.app.state.commands)


async def get_dead_letters(request: Request) -> DeadLetterStore:
    return cast(DeadLetterStore, request.app.state.dead_letters)


async def get_schedules(request: Request) -> ScheduleStore:
    return cast(ScheduleStore, request.app.state.schedules)


async def get_registry(request: Request) -> RegistryStore:
    return cast(RegistryStore, request.app.state.registry)


async def get_scheduler(request: Request) -> SchedulerApi:
    return cast(SchedulerApi, request.app.state.scheduler)


async def get_types(request: Request) -> SubmissionTypes:
    return cast(SubmissionTypes, request.app.state.types)


async def get_submissions(request: Request) -> SubmissionRecords:
    return cast(SubmissionRecords, request.app.state.submissions)


async def get_settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def created_range(
    created_from: Annotated[
        IsoDateTime | None,
        Query(alias="createdFrom", description="ISO datetime, inclusive (naive = UTC)."),
    ] = None,
    created_to: Annotated[
        IsoDateTime | None,
        Query(alias="createdTo", description="ISO datetime, exclusive (naive = UTC)."),
    ] = None,
) -> CreatedRange:
    return CreatedRange.of(created_from, created_to)


async def visibility(
    identity: CurrentIdentity,
    submitted_by: Annotated[
        str | None,
        Query(alias="submittedBy", max_length=320, description="Admins only: one owner's jobs."),
    ] = None,
) -> Visibility:
    return visibility_for(identity, submitted_by=submitted_by)


async def own_visibility(identity: CurrentIdentity) -> Visibility:
    """A user's own rows; an admin's everyone's."""
    return visibility_for(identity)


# Past this page an OFFSET scan is a denial of service, and past 2**63 rows it overflows.
MAX_PAGE_NUMBER = 100_000


async def page_request(
    page_number: Annotated[int, Query(alias="pageNumber", ge=1, le=MAX_PAGE_NUMBER)] = 1,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
) -> PageRequest:
    return PageRequest(page_number, page_size)


async def require_admin(identity: CurrentIdentity) -> str:
    if not identity.is_admin:
        raise Forbidden("only admins may do this")
    return identity.email


ReaderDep = Annotated[JobReader, Depends(get_reader)]
CommandsDep = Annotated[CommandPublisher, Depends(get_commands)]
DeadLettersDep = Annotated[DeadLetterStore, Depends(get_dead_letters)]
SchedulesDep = Annotated[ScheduleStore, Depends(get_schedules)]
SchedulerDep = Annotated[SchedulerApi, Depends(get_scheduler)]
RegistryDep = Annotated[RegistryStore, Depends(get_registry)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
TypesDep = Annotated[SubmissionTypes, Depends(get_types)]
SubmissionsDep = Annotated[SubmissionRecords, Depends(get_submissions)]
CreatedRangeDep = Annotated[CreatedRange, Depends(created_range)]
VisibilityDep = Annotated[Visibility, Depends(visibility)]
OwnVisibilityDep = Annotated[Visibility, Depends(own_visibility)]
PageDep = Annotated[PageRequest, Depends(page_request)]
AdminDep = Annotated[str, Depends(require_admin)]
