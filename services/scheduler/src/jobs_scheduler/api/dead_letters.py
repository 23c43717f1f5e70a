"""``/internal/v1/dead-letters``: requeue or discard one letter, or many, for the dashboard,
which found the letters and checked an edited payload (``jobs_common.dead_letter_commands``).
Service to service, like ``api/schedules.py``. A caller acts on the letters of jobs in the
projects where it is at least a member (the platform admin: all); any other is not found."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Request

from jobs_common.auth import Identity
from jobs_common.dead_letter_commands import (
    DEAD_LETTERS_PATH,
    BulkCommand,
    BulkDone,
    Command,
    DiscardCommand,
    RequeueCommand,
    Resolved,
)
from jobs_common.request_identity import CurrentIdentity
from jobs_common.tenancy import OrgRole
from jobs_scheduler.api.deps import scope_of, work_of
from jobs_scheduler.app import dead_letters

router = APIRouter(prefix=DEAD_LETTERS_PATH, include_in_schema=False)

DeadLetterId = Annotated[uuid.UUID, Path(alias="deadLetterId")]


@router.post("/bulk")
async def act_on_many(
    request: Request, command: BulkCommand, identity: CurrentIdentity
) -> BulkDone:
    work = partial(
        dead_letters.act_on_many,
        command=command,
        actor=identity.actor,
        scope=scope_of(identity, OrgRole.MEMBER),
    )
    return BulkDone(count=await work_of(request).run(work))


@router.post("/{deadLetterId}/requeue")
async def requeue(
    request: Request,
    dead_letter_id: DeadLetterId,
    command: RequeueCommand,
    identity: CurrentIdentity,
) -> Resolved:
    return await on_one(request, dead_letters.requeue_one, dead_letter_id, command, identity)


@router.post("/{deadLetterId}/discard")
async def discard(
    request: Request,
    dead_letter_id: DeadLetterId,
    command: DiscardCommand,
    identity: CurrentIdentity,
) -> Resolved:
    return await on_one(request, dead_letters.discard_one, dead_letter_id, command, identity)


async def on_one(
    request: Request,
    use_case: Callable[..., Awaitable[Resolved]],
    dead_letter_id: uuid.UUID,
    command: Command,
    identity: Identity,
) -> Resolved:
    """Run a use case on one letter, as the caller (within its scope)."""
    work = partial(
        use_case,
        dead_letter_id=dead_letter_id,
        command=command,
        actor=identity.actor,
        scope=scope_of(identity, OrgRole.MEMBER),
    )
    return await work_of(request).run(work)
