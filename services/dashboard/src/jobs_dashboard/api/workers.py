"""The worker registry (admins only): GET the workers with what each runs and its counts;
POST an admin's quiet (take no new job) or stop (quiet, then exit once its jobs finished),
carried out by the worker over its control queue (docs/worker.md, "Quiet and stop")."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, cast

from fastapi import APIRouter, Depends, Path, Query, Request

from jobs_common.errors import Conflict, ErrorEnvelope, NotFound
from jobs_common.request_identity import CurrentIdentity
from jobs_dashboard.adapters.worker_control import WorkerControlPublisher
from jobs_dashboard.adapters.workers import WorkerStore
from jobs_dashboard.api.deps import AdminDep, SettingsDep
from jobs_dashboard.domain.workers import (
    WorkerCommand,
    WorkerCommandAccepted,
    WorkerList,
    command_refused,
)

router = APIRouter(prefix="/api/workers", tags=["workers"])


async def get_worker_store(request: Request) -> WorkerStore:
    return cast(WorkerStore, request.app.state.workers)


async def get_worker_control(request: Request) -> WorkerControlPublisher:
    return cast(WorkerControlPublisher, request.app.state.worker_control)


WorkersDep = Annotated[WorkerStore, Depends(get_worker_store)]
WorkerControlDep = Annotated[WorkerControlPublisher, Depends(get_worker_control)]
WorkerId = Annotated[str, Path(alias="workerId", min_length=1, max_length=200)]


@router.get(
    "",
    summary="Live workers and those dead within includeDeadForMinutes (admins only), judged "
    "against how far the scheduler has read heartbeats, with the jobs each runs",
    responses={403: {"description": "Not an admin: host names, pids and versions are internal"}},
)
async def list_workers(
    _: AdminDep,
    store: WorkersDep,
    settings: SettingsDep,
    include_dead_for_minutes: Annotated[
        int, Query(alias="includeDeadForMinutes", ge=0, le=10_080)
    ] = 60,
) -> WorkerList:
    return await store.workers(
        dead_after=timedelta(seconds=settings.worker_dead_after_seconds),
        include_dead_minutes=include_dead_for_minutes,
        horizon_stale_after=timedelta(seconds=settings.horizon_stale_seconds),
    )


COMMAND_RESPONSES: dict[int | str, dict[str, object]] = {
    403: {"model": ErrorEnvelope, "description": "Not an admin"},
    404: {"model": ErrorEnvelope, "description": "No such worker in the registry"},
    409: {"model": ErrorEnvelope, "description": "The worker is dead"},
    503: {"model": ErrorEnvelope, "description": "The broker did not confirm the command"},
}


async def command_worker(
    command: WorkerCommand,
    worker_id: str,
    identity: CurrentIdentity,
    store: WorkerStore,
    control: WorkerControlPublisher,
    settings: SettingsDep,
) -> WorkerCommandAccepted:
    status = await store.status_of(
        worker_id,
        dead_after=timedelta(seconds=settings.worker_dead_after_seconds),
        horizon_stale_after=timedelta(seconds=settings.horizon_stale_seconds),
    )
    if status is None:
        raise NotFound(f"worker {worker_id} not found")
    if (refused := command_refused(status)) is not None:
        raise Conflict(refused)
    sent = await control.send(worker_id=worker_id, command=command, requested_by=identity.actor)
    return WorkerCommandAccepted(
        worker_id=worker_id,
        command=command,
        requested_by=sent.requested_by,
        requested_at=sent.requested_at,
    )


@router.post(
    "/{workerId}/quiet",
    status_code=202,
    summary="Quiet a worker (admins only): it takes no new job and finishes those it runs",
    responses=COMMAND_RESPONSES,
)
async def quiet_worker(
    worker_id: WorkerId,
    _: AdminDep,
    identity: CurrentIdentity,
    store: WorkersDep,
    control: WorkerControlDep,
    settings: SettingsDep,
) -> WorkerCommandAccepted:
    return await command_worker("quiet", worker_id, identity, store, control, settings)


@router.post(
    "/{workerId}/stop",
    status_code=202,
    summary="Stop a worker after its current jobs (admins only): quiet, then it exits once "
    "the jobs it runs have finished",
    responses=COMMAND_RESPONSES,
)
async def stop_worker(
    worker_id: WorkerId,
    _: AdminDep,
    identity: CurrentIdentity,
    store: WorkersDep,
    control: WorkerControlDep,
    settings: SettingsDep,
) -> WorkerCommandAccepted:
    return await command_worker("stop", worker_id, identity, store, control, settings)
