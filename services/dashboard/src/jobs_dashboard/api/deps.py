"""FastAPI dependencies as Annotated aliases."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, cast

from fastapi import Depends, Query, Request

from jobs_common.http import CurrentIdentity
from jobs_dashboard.adapters.commands import CommandPublisher
from jobs_dashboard.adapters.jobstore import JobReader
from jobs_dashboard.domain.query import CreatedRange, Visibility

__all__ = [
    "CommandsDep",
    "CreatedRangeDep",
    "CurrentIdentity",
    "ReaderDep",
    "VisibilityDep",
]


def get_reader(request: Request) -> JobReader:
    return cast(JobReader, request.app.state.reader)


def get_commands(request: Request) -> CommandPublisher:
    return cast(CommandPublisher, request.app.state.commands)


def created_range(
    created_from: Annotated[
        datetime | None,
        Query(alias="createdFrom", description="ISO datetime, inclusive (naive = UTC)."),
    ] = None,
    created_to: Annotated[
        datetime | None,
        Query(alias="createdTo", description="ISO datetime, exclusive (naive = UTC)."),
    ] = None,
) -> CreatedRange:
    return CreatedRange.of(created_from, created_to)


def visibility(
    identity: CurrentIdentity,
    submitted_by: Annotated[
        str | None,
        Query(alias="submittedBy", max_length=320, description="Admins only: one owner's jobs."),
    ] = None,
) -> Visibility:
    return Visibility.for_identity(identity, submitted_by=submitted_by)


ReaderDep = Annotated[JobReader, Depends(get_reader)]
CommandsDep = Annotated[CommandPublisher, Depends(get_commands)]
CreatedRangeDep = Annotated[CreatedRange, Depends(created_range)]
VisibilityDep = Annotated[Visibility, Depends(visibility)]
