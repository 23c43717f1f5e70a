"""Dead letters: list, groups by fingerprint, requeue, discard, bulk actions, audit log."""

from __future__ import annotations

import logging
import uuid
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Path, Query

from jobs_common.contracts import utcnow
from jobs_common.errors import NotFound, UpstreamUnavailable
from jobs_common.request_identity import CurrentIdentity
from jobs_dashboard.adapters.commands import CommandPublisher, retry_requested
from jobs_dashboard.adapters.dead_letters import ActionRecord, DeadLetterStore, Target
from jobs_dashboard.api.deps import (
    CommandsDep,
    CreatedRangeDep,
    DeadLettersDep,
    OwnVisibilityDep,
    PageDep,
    SettingsDep,
    TypesDep,
    VisibilityDep,
)
from jobs_dashboard.domain.dead_letters import (
    ACTION_BULK,
    ACTION_REQUEUE,
    SAMPLE_SIZE,
    BulkAction,
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
    ensure_requeueable,
    requeue_not_before,
)
from jobs_dashboard.domain.disclosure import dead_letter_for, dead_letters_for, groups_for
from jobs_dashboard.domain.payloads import check_payload
from jobs_dashboard.domain.query import Visibility
from jobs_dashboard.metrics import DEAD_LETTER_ACTIONS

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


@router.get("", summary="Dead letters of the caller's jobs (an admin: all), newest first")
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


@router.get("/actions", summary="Audit log of requeues and discards (users: their own)")
async def dead_letter_action_log(
    identity: CurrentIdentity,
    page: PageDep,
    store: DeadLettersDep,
    dead_letter_id: Annotated[uuid.UUID | None, Query(alias="deadLetterId")] = None,
    job_id: Annotated[uuid.UUID | None, Query(alias="jobId")] = None,
) -> DeadLetterActionPage:
    actor = None if identity.is_admin else identity.email
    items, total = await store.actions(actor, page, dead_letter_id=dead_letter_id, job_id=job_id)
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
    commands: CommandsDep,
    types: TypesDep,
    body: Annotated[RequeueBody | None, Body()] = None,
) -> RequeueAccepted:
    request = body or RequeueBody()
    letter = await store.get(dead_letter_id, visibility)
    if letter is None:
        raise NotFound(f"dead letter {dead_letter_id} not found")
    item = letter.item
    ensure_requeueable(item.resolved_at, item.resolution, item.job_status.value)
    payload = (
        None
        if request.payload is None
        else (
            await check_payload(
                item.job_type, request.payload, prefix="payload", identity=identity, types=types
            )
        ).payload
    )
    message = retry_requested(
        job_id=item.job_id,
        requested_by=identity.email,
        trace_id=letter.trace_id,
        reason=request.reason,
        payload=payload,
    )
    record = ActionRecord(ACTION_REQUEUE, identity.email, request.reason, item.id, item.job_id)
    await store.record_then(record, lambda: commands.request_requeue(message))
    DEAD_LETTER_ACTIONS.labels(action=ACTION_REQUEUE).inc()
    log.info(
        "dead letter requeued",
        extra={
            "action": "dead_letter_requeue",
            "job_id": str(item.job_id),
            "dead_letter_id": str(item.id),
            "edited_payload": payload is not None,
        },
    )
    return RequeueAccepted(dead_letter_id=item.id, job_id=item.job_id)


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
    body: Annotated[DiscardBody | None, Body()] = None,
) -> DeadLetterItem:
    reason = None if body is None else body.reason
    item = await store.discard(dead_letter_id, visibility, actor=identity.email, reason=reason)
    if item is None:
        raise NotFound(f"dead letter {dead_letter_id} not found")
    DEAD_LETTER_ACTIONS.labels(action="discard").inc()
    return dead_letter_for(item, identity)


@router.post("/bulk", summary="Requeue or discard every open dead letter a selector matches")
async def bulk_action(
    request: BulkRequest,
    identity: CurrentIdentity,
    store: DeadLettersDep,
    commands: CommandsDep,
    settings: SettingsDep,
) -> BulkResult:
    visibility = Visibility.for_identity(identity)
    filters = request.selector.filters(
        visibility, action=request.action, for_owner=not identity.is_admin
    )
    limit = settings.bulk_limit
    bulk = ActionRecord(
        ACTION_BULK[request.action],
        identity.email,
        request.reason,
        selector=request.selector.as_json(),
    )
    if request.dry_run:
        matching, letters = await store.select_for_bulk(filters, limit=SAMPLE_SIZE)
        return BulkResult(
            action=request.action,
            dry_run=True,
            count=min(matching, limit),
            matching=matching,
            sample=dead_letters_for([letter.item for letter in letters], identity),
        )
    if request.action is BulkAction.DISCARD:
        matching = await store.count(filters)
        count = await store.bulk_discard(filters, limit=limit, bulk=bulk)
    else:
        matching = await store.count(filters)
        targets = await store.requeue_targets(filters, limit=limit)
        count = await _bulk_requeue(
            targets, bulk, store, commands, settings.requeue_rate_per_second
        )
    DEAD_LETTER_ACTIONS.labels(action=bulk.action).inc()
    log.info(
        "bulk dead-letter action",
        extra={
            "action": bulk.action,
            "affected": count,
            "matching": matching,
            "actor": identity.email,
        },
    )
    return BulkResult(
        action=request.action, dry_run=False, count=count, matching=matching, sample=[]
    )


async def _bulk_requeue(
    letters: list[Target],
    bulk: ActionRecord,
    store: DeadLetterStore,
    commands: CommandPublisher,
    rate: float,
) -> int:
    """Publish one RetryRequested per letter, the i-th not before now + i / rate, then audit."""
    now = utcnow()
    messages = [
        retry_requested(
            job_id=letter.job_id,
            requested_by=bulk.actor,
            trace_id=letter.trace_id,
            reason=bulk.reason,
            not_before=requeue_not_before(now, index, rate),
        )
        for index, letter in enumerate(letters)
    ]
    confirmed = await commands.publish_requeues(messages)
    done = [letter for letter, ok in zip(letters, confirmed, strict=True) if ok]
    per_letter = [
        ActionRecord(ACTION_REQUEUE, bulk.actor, bulk.reason, letter.dead_letter_id, letter.job_id)
        for letter in done
    ]
    summary = ActionRecord(
        bulk.action, bulk.actor, bulk.reason, selector=bulk.selector, affected=len(done)
    )
    await store.record([summary, *per_letter])
    if len(done) < len(letters):
        raise UpstreamUnavailable(
            f"{len(letters) - len(done)} of {len(letters)} requeues could not be published; "
            "repeat the request to requeue the rest"
        )
    return len(done)


# Last: the fixed GET paths above (/groups, /actions) are matched before this one.
@router.get(
    "/{deadLetterId}",
    summary="One dead letter (of the caller's jobs; an admin: any), open or resolved",
    responses={404: {"description": "Unknown or not yours"}},
)
async def get_dead_letter(
    dead_letter_id: DeadLetterId,
    identity: CurrentIdentity,
    visibility: OwnVisibilityDep,
    store: DeadLettersDep,
) -> DeadLetterItem:
    letter = await store.get(dead_letter_id, visibility)
    if letter is None:
        raise NotFound(f"dead letter {dead_letter_id} not found")
    return dead_letter_for(letter.item, identity)
