"""Named retry policies, the worker registry and batch progress."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from jobs_common.errors import NotFound
from jobs_common.request_identity import CurrentIdentity
from jobs_common.retry_policy_commands import (
    RetryPolicyCreate,
    RetryPolicyFields,
    RetryPolicyView,
    policy_project,
)
from jobs_common.topology import DEFAULT_QUEUE, READY_QUEUE_BY_PRIORITY, ready_queue_for
from jobs_dashboard.adapters.broker_queues import ready_queue_counts
from jobs_dashboard.api.deps import (
    AdminDep,
    OwnVisibilityDep,
    PageDep,
    RegistryDep,
    SchedulerDep,
    SettingsDep,
    VisibilityDep,
)
from jobs_dashboard.domain.batches import BatchPage, BatchView
from jobs_dashboard.domain.disclosure import policies_for
from jobs_dashboard.domain.queues import LABELS, QueueDepth, QueueList
from jobs_dashboard.domain.retry_policies import DEFAULT_POLICY, RetryPolicyList
from jobs_dashboard.domain.workers import WorkerList

policies = APIRouter(prefix="/api/retry-policies", tags=["retry policies"])
workers = APIRouter(prefix="/api/workers", tags=["workers"])
queue_depths = APIRouter(prefix="/api/queue-depths", tags=["queues"])
batches = APIRouter(prefix="/api/batches", tags=["batches"])


@policies.get("", summary="Named retry policies: shared ones and the caller's projects', by name")
async def list_policies(
    identity: CurrentIdentity, visibility: OwnVisibilityDep, store: RegistryDep
) -> RetryPolicyList:
    return RetryPolicyList(items=policies_for(await store.policies(visibility), identity))


@policies.get("/defaults", summary="The built-in default policy (job types may override it)")
async def default_policy(_: CurrentIdentity) -> RetryPolicyFields:
    return DEFAULT_POLICY


@policies.post(
    "",
    status_code=201,
    summary="Store a named retry policy in the request's project (its admins); the platform "
    "admin naming no project stores one every project shares",
    responses={
        403: {"description": "Not an admin of the project (shared: not the platform admin)"},
        409: {"description": "Name taken in the project"},
    },
)
async def create_policy(
    body: RetryPolicyCreate, identity: CurrentIdentity, scheduler: SchedulerDep
) -> RetryPolicyView:
    # Checked here (403 at once), and again by the scheduler, which owns the policies (409:
    # the name is taken in the project).
    policy_project(identity)
    return await scheduler.create_policy(body, identity)


@workers.get(
    "",
    summary="Live workers and those dead within includeDeadForMinutes (admins only), judged "
    "against how far the scheduler has read heartbeats",
    responses={403: {"description": "Not an admin: host names, pids and versions are internal"}},
)
async def list_workers(
    _: AdminDep,
    store: RegistryDep,
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


@batches.get("", summary="Batches of the caller's projects, newest first, with their progress")
async def list_batches(visibility: VisibilityDep, page: PageDep, store: RegistryDep) -> BatchPage:
    return await store.batch_page(visibility, page)


@batches.get("/{batchId}", summary="Progress of a batch: members by status, finished or not")
async def get_batch(
    batch_id: Annotated[uuid.UUID, Path(alias="batchId")],
    visibility: OwnVisibilityDep,
    store: RegistryDep,
) -> BatchView:
    view = await store.batch(batch_id, visibility)
    if view is None:
        raise NotFound(f"batch {batch_id} not found")
    return view


@queue_depths.get(
    "", summary="Queue depth per priority: queued jobs, the oldest one's age, the broker"
)
async def list_queues(_: CurrentIdentity, store: RegistryDep, request: Request) -> QueueList:
    """Counts of the whole platform (no job or owner is named), for anyone signed in."""
    now, queued = await store.queued_by_queue()
    named = sorted({queue for queue, _ in queued} - {DEFAULT_QUEUE})
    shown = [DEFAULT_QUEUE, *named]
    names = {
        (queue, int(priority)): ready_queue_for(priority, queue)
        for queue in shown
        for priority in sorted(READY_QUEUE_BY_PRIORITY, reverse=True)
    }
    broker = await ready_queue_counts(request.app.state.bus, tuple(names.values()))
    items = []
    for (named_queue, priority), name in names.items():
        count, oldest = queued.get((named_queue, priority), (0, None))
        ready, consumers = broker.get(name, (None, None))
        items.append(
            QueueDepth(
                queue=name,
                named_queue=named_queue,
                priority=int(priority),
                label=LABELS[int(priority)],
                queued_jobs=count,
                oldest_queued_at=oldest,
                oldest_age_seconds=None if oldest is None else (now - oldest).total_seconds(),
                broker_ready=ready,
                consumers=consumers,
            )
        )
    return QueueList(items=items)
