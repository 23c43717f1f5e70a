"""Dead letters: list, groups by fingerprint, requeue, discard, bulk actions, audit log."""

from __future__ import annotations

import logging
import uuid
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Path, Query

from jobs_common.auth import Identity
from jobs_common.dead_letter_commands import (
    ACTION_BULK,
    ACTION_DISCARD,
    ACTION_REQUEUE,
    BulkCommand,
    DiscardCommand,
    RequeueCommand,
)
from jobs_common.errors import NotFound
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_dashboard.adapters.metrics import DEAD_LETTER_ACTIONS
from jobs_dashboard.api.deps import (
    CreatedRangeDep,
    DeadLettersDep,
    OwnVisibilityDep,
    PageDep,
    SchedulerDep,
    SettingsDep,
    TypesDep,
    VisibilityDep,
)
from jobs_dashboard.domain.dead_letters import (
    SAMPLE_SIZE,
    BulkRequest,
    BulkResult,
    DeadLetterActionPage,
    DeadLetterFilters,
    DeadLetterGroups,
    DeadLetterItem,
    DeadLetterPage,
    DeadLetterState,
    DiscardBody,
    RequeueAccepted,
    RequeueBody,
)
from jobs_dashboard.domain.disclosure import dead_letter_for, dead_letters_for, groups_for
from jobs_dashboard.domain.payloads import check_payload
from jobs_dashboard.domain.query import visibility_for

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/dead-letters", tags=["dead letters"])

DeadLetterId = Annotated[uuid.UUID, Path(alias="deadLetterId", description="Dead letter id.")]


async def dead_letter_filters(
    identity: CurrentIdentity,
    visibility: VisibilityDep,
    created: CreatedRangeDep,
    status: Annotated[DeadLetterState, Query(description="open, resolved or all")] = (
        DeadLetterState.OPEN
    ),
    reason: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    job_type: Annotated[str | None, Query(alias="jobType", min_length=1, max_length=200)] = None,
    fingerprint: Annotated[str | None, Query(max_length=2_000)] = None,
) -> DeadLetterFilters:
    return DeadLetterFilters(
        visibility=visibility,
        state=status,
        reason=reason,
        job_type=job_type,
        fingerprint=fingerprint,
        created=created,
        for_owner=not identity.is_admin,
    )


FiltersDep = Annotated[DeadLetterFilters, Depends(dead_letter_filters)]


@router.get("", summary="Dead letters of the caller's projects' jobs, newest first")
async def list_dead_letters(
    filters: FiltersDep, identity: CurrentIdentity, page: PageDep, store: DeadLettersDep
) -> DeadLetterPage:
    items, total = await store.page(filters, page)
    return DeadLetterPage.of(dead_letters_for(items, identity), total, page)


@router.get("/groups", summary="Dead letters grouped by error fingerprint, largest first")
async def dead_letter_groups(
    filters: FiltersDep,
    identity: CurrentIdentity,
    store: DeadLettersDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> DeadLetterGroups:
    return DeadLetterGroups(items=groups_for(await store.groups(filters, limit=limit), identity))


@router.get(
    "/actions",
    summary="Audit log of requeues and discards: the caller's own, and those on its projects' jobs",
)
async def dead_letter_action_log(
    identity: CurrentIdentity,
    page: PageDep,
    store: DeadLettersDep,
    dead_letter_id: Annotated[uuid.UUID | None, Query(alias="deadLetterId")] = None,
    job_id: Annotated[uuid.UUID | None, Query(alias="jobId")] = None,
) -> DeadLetterActionPage:
    items, total = await store.actions(
        visibility_for(identity),
        identity.actor,
        page,
        dead_letter_id=dead_letter_id,
        job_id=job_id,
    )
    return DeadLetterActionPage.of(items, total, page)


@router.post(
    "/{deadLetterId}/requeue",
    status_code=202,
    summary="Run the dead job again, optionally with an edited payload",
    responses={404: {"description": "Unknown"}, 409: {"description": "Resolved or not dead"}},
)
async def requeue_dead_letter(
    dead_letter_id: DeadLetterId,
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    store: DeadLettersDep,
    scheduler: SchedulerDep,
    types: TypesDep,
    body: Annotated[RequeueBody | None, Body()] = None,
) -> RequeueAccepted:
    # The scheduler decides (409: resolved, or the job no longer dead) and requeues; read
    # here first for the job's type, which an edited payload is checked against.
    request = body or RequeueBody()
    item = await store.get(dead_letter_id, visibility)
    if item is None:
        raise NotFound(f"dead letter {dead_letter_id} not found")
    may_act(identity, item)
    payload = (
        None
        if request.payload is None
        else (
            await check_payload(
                item.job_type, request.payload, prefix="payload", identity=identity, types=types
            )
        ).payload
    )
    command = RequeueCommand(reason=request.reason, payload=payload)
    done = await scheduler.requeue_dead_letter(item.id, command, identity)
    DEAD_LETTER_ACTIONS.labels(action=ACTION_REQUEUE).inc()
    log.info(
        "dead letter requeued",
        extra={
            "action": "dead_letter_requeue",
            "job_id": str(done.job_id),
            "dead_letter_id": str(done.dead_letter_id),
            "edited_payload": payload is not None,
        },
    )
    return RequeueAccepted(dead_letter_id=done.dead_letter_id, job_id=done.job_id)


@router.post(
    "/{deadLetterId}/discard",
    summary="Resolve an open dead letter as discarded (the job stays dead)",
    responses={404: {"description": "Unknown"}, 409: {"description": "Already resolved"}},
)
async def discard_dead_letter(
    dead_letter_id: DeadLetterId,
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    store: DeadLettersDep,
    scheduler: SchedulerDep,
    body: Annotated[DiscardBody | None, Body()] = None,
) -> DeadLetterItem:
    found = await store.get(dead_letter_id, visibility)
    if found is not None:
        may_act(identity, found)
    command = DiscardCommand(reason=None if body is None else body.reason)
    await scheduler.discard_dead_letter(dead_letter_id, command, identity)
    DEAD_LETTER_ACTIONS.labels(action=ACTION_DISCARD).inc()
    item = await store.get(dead_letter_id, visibility)
    if item is None:  # deleted with its job since
        raise NotFound(f"dead letter {dead_letter_id} not found")
    return dead_letter_for(item, identity)


@router.post("/bulk", summary="Requeue or discard every open dead letter a selector matches")
async def bulk_action(
    request: BulkRequest,
    identity: CurrentIdentity,
    store: DeadLettersDep,
    scheduler: SchedulerDep,
    settings: SettingsDep,
) -> BulkResult:
    # The letters of the projects where the caller may act (a member or above).
    filters = request.selector.filters(
        identity.scope(OrgRole.MEMBER), action=request.action, for_owner=not identity.is_admin
    )
    limit = settings.bulk_limit
    if request.dry_run:
        matching, items = await store.select_for_bulk(filters, limit=SAMPLE_SIZE)
        return BulkResult(
            action=request.action,
            dry_run=True,
            count=min(matching, limit),
            matching=matching,
            sample=dead_letters_for(items, identity),
        )
    matching = await store.count(filters)
    command = BulkCommand(
        action=request.action,
        ids=await store.matching_ids(filters, limit=limit),
        reason=request.reason,
        selector=request.selector.as_json(),
        rate_per_second=settings.requeue_rate_per_second,
    )
    count = (await scheduler.dead_letters_bulk(command, identity)).count
    action = ACTION_BULK[request.action]
    DEAD_LETTER_ACTIONS.labels(action=action).inc()
    log.info(
        "bulk dead-letter action",
        extra={"action": action, "affected": count, "matching": matching, "actor": identity.actor},
    )
    return BulkResult(
        action=request.action, dry_run=False, count=count, matching=matching, sample=[]
    )


def may_act(identity: Identity, item: DeadLetterItem) -> None:
    """A dead letter's commands take a member (or above) of its job's project."""
    identity.require(
        str(item.project_id),
        OrgRole.MEMBER,
        to="requeue or discard dead letters",
        missing=f"dead letter {item.id} not found",
    )


# Last: the fixed GET paths above (/groups, /actions) are matched before this one.
@router.get(
    "/{deadLetterId}",
    summary="One dead letter of the caller's projects, open or resolved",
    responses={404: {"description": "Unknown or not yours"}},
)
async def get_dead_letter(
    dead_letter_id: DeadLetterId,
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    store: DeadLettersDep,
) -> DeadLetterItem:
    item = await store.get(dead_letter_id, visibility)
    if item is None:
        raise NotFound(f"dead letter {dead_letter_id} not found")
    return dead_letter_for(item, identity)
