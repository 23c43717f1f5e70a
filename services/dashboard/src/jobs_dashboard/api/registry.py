"""Named retry policies, batch progress and the retry of a batch's dead
members."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from jobs_common.errors import Conflict, NotFound
from jobs_common.request_identity import CurrentIdentity
from jobs_common.retry_policy_commands import (
    RetryPolicyCreate,
    RetryPolicyFields,
    RetryPolicyView,
    policy_project,
)
from jobs_common.tenancy import OrgRole
from jobs_common.topology import DEFAULT_QUEUE, READY_QUEUE_BY_PRIORITY, ready_queue_for
from jobs_dashboard.adapters.broker_queues import ready_queue_counts
from jobs_dashboard.adapters.queue_names import known_queue_names
from jobs_dashboard.api.deps import (
    CommandsDep,
    OwnVisibilityDep,
    PageDep,
    RegistryDep,
    SchedulerDep,
    VisibilityDep,
)
from jobs_dashboard.domain.batches import BatchPage, BatchRetried, BatchView
from jobs_dashboard.domain.disclosure import policies_for
from jobs_dashboard.domain.id_prefix import parse_id_prefix
from jobs_dashboard.domain.queues import LABELS, QueueDepth, QueueList
from jobs_dashboard.domain.retry_policies import DEFAULT_POLICY, RetryPolicyList

policies = APIRouter(prefix="/api/retry-policies", tags=["retry policies"])
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


MAX_RETRIED = 10_000  # a batch's members at most (the submission's cap)
RETRY_PUBLISH_CHUNK = 50  # retry commands awaiting their broker confirms at once

BatchId = Annotated[uuid.UUID, Path(alias="batchId")]


@batches.get(
    "",
    summary="Batches of the caller's projects, newest first, with their progress",
    responses={422: {"description": "batchId shorter than 8 hex digits, or not hex"}},
)
async def list_batches(
    visibility: VisibilityDep,
    page: PageDep,
    store: RegistryDep,
    batch_id: Annotated[
        str | None,
        Query(
            alias="batchId",
            max_length=64,
            description="Only batches whose id starts with this: 8 or more of its hex digits "
            "(as the console shows ids) or the whole id.",
        ),
    ] = None,
) -> BatchPage:
    ids = None if batch_id is None else parse_id_prefix(batch_id, field="batchId")
    return await store.batch_page(visibility, page, ids)


@batches.post(
    "/{batchId}/retry-failed",
    status_code=202,
    summary="Ask the scheduler to run every dead member of a batch again",
    description="As POST /api/jobs/{jobId}/retry for each dead member (a member or above of "
    "the batch's project): one retry command each, answered once the broker confirmed them "
    "all. The scheduler retries those still dead when it reads them.",
    responses={
        403: {"description": "A viewer of the batch's project"},
        404: {"description": "Unknown batch, or not the caller's"},
        409: {"description": "No member of the batch is dead"},
    },
)
async def retry_failed(
    batch_id: BatchId,
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    store: RegistryDep,
    commands: CommandsDep,
) -> BatchRetried:
    view = await store.batch(batch_id, visibility)
    if view is None:
        raise NotFound(f"batch {batch_id} not found")
    identity.require(
        str(view.project_id),
        OrgRole.MEMBER,
        to="retry jobs",
        missing=f"batch {batch_id} not found",
    )
    dead = await store.dead_members(batch_id, MAX_RETRIED)
    if not dead:
        raise Conflict(f"batch {batch_id} has no dead job to retry")
    for start in range(0, len(dead), RETRY_PUBLISH_CHUNK):
        await asyncio.gather(
            *(
                commands.request_retry(job_id=job_id, requested_by=identity.actor, trace_id=trace)
                for job_id, trace in dead[start : start + RETRY_PUBLISH_CHUNK]
            )
        )
    return BatchRetried(batch_id=batch_id, job_ids=[job_id for job_id, _ in dead])


@batches.get("/{batchId}", summary="Progress of a batch: members by status, finished or not")
async def get_batch(
    batch_id: BatchId,
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
    # every known queue, a queue nothing waits in or no worker serves too (consumers 0)
    known = await known_queue_names(store)
    named = sorted(({queue for queue, _ in queued} | known) - {DEFAULT_QUEUE})
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
