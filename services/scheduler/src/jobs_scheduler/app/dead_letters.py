"""Dead-letter commands from the dashboard: requeue one, discard one, requeue or discard many.

Each runs in one transaction: lock the named letters with their jobs (letters outside the
caller's scope are not there), ask ``domain/dead_letters`` whether each may be acted on, move
the requeued jobs through the status writer (``commands.requeue_dead_jobs``, which resolves
their letters) or resolve the discarded letters, and write the audit rows."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import utcnow
from jobs_common.dead_letter_commands import (
    ACTION_BULK,
    ACTION_DISCARD,
    ACTION_REQUEUE,
    BulkAction,
    BulkCommand,
    DiscardCommand,
    RequeueCommand,
    Resolved,
)
from jobs_common.errors import NotFound
from jobs_common.tenancy import Scope
from jobs_scheduler.adapters import dead_letters
from jobs_scheduler.adapters.dead_letters import ActionRecord
from jobs_scheduler.adapters.set_based import json_text
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.commands import Requeue, requeue_dead_jobs
from jobs_scheduler.domain.dead_letters import (
    ensure_open,
    ensure_requeueable,
    is_requeueable,
    requeue_not_before,
)

MANUAL = "manual retry"  # the job event's reason when the user gave none


async def lock_one(
    connection: AsyncConnection, dead_letter_id: uuid.UUID, scope: Scope
) -> Row[Any]:
    letters = await dead_letters.lock_letters(connection, [dead_letter_id], scope)
    if not letters:
        raise NotFound(f"dead letter {dead_letter_id} not found")
    return letters[0]


async def requeue_one(
    connection: AsyncConnection,
    changes: Changes,
    dead_letter_id: uuid.UUID,
    command: RequeueCommand,
    *,
    actor: str,
    scope: Scope,
) -> Resolved:
    """Run the letter's dead job again now, with the edited payload if any; 409 when the
    letter is resolved or its job no longer dead."""
    letter = await lock_one(connection, dead_letter_id, scope)
    ensure_requeueable(letter.resolved_at, letter.resolution, letter.job_status)
    requeue = Requeue(
        letter.job_id,
        letter.job_attempt,
        command.reason or MANUAL,
        actor,
        payload=json_text(command.payload),
    )
    await requeue_dead_jobs(connection, changes, [requeue])
    record = ActionRecord(ACTION_REQUEUE, actor, command.reason, letter.id, letter.job_id)
    await dead_letters.record_actions(connection, [record])
    return await dead_letters.resolution_of(connection, letter.id)


async def discard_one(
    connection: AsyncConnection,
    _: Changes,
    dead_letter_id: uuid.UUID,
    command: DiscardCommand,
    *,
    actor: str,
    scope: Scope,
) -> Resolved:
    """Resolve an open letter as discarded (its job stays dead); 409 when resolved."""
    letter = await lock_one(connection, dead_letter_id, scope)
    ensure_open(letter.resolved_at, letter.resolution)
    [resolved] = await dead_letters.discard(connection, [letter.id], actor)
    record = ActionRecord(ACTION_DISCARD, actor, command.reason, letter.id, letter.job_id)
    await dead_letters.record_actions(connection, [record])
    return resolved


async def act_on_many(
    connection: AsyncConnection,
    changes: Changes,
    command: BulkCommand,
    *,
    actor: str,
    scope: Scope,
) -> int:
    """Requeue (paced: the i-th not before now + i / rate) or discard the letters of
    ``command.ids`` that still qualify; letters another command holds are passed over. One
    audit row for the whole, then one per letter acted on. Returns how many."""
    letters = await dead_letters.lock_letters(connection, command.ids, scope, skip_locked=True)
    if command.action is BulkAction.REQUEUE:
        action = ACTION_REQUEUE
        chosen = []  # one per job (its oldest open letter), oldest first
        jobs_chosen: set[uuid.UUID] = set()
        for letter in letters:
            if letter.job_id not in jobs_chosen and is_requeueable(
                letter.resolved_at, letter.job_status
            ):
                jobs_chosen.add(letter.job_id)
                chosen.append(letter)
        now = utcnow()
        requeues = [
            Requeue(
                letter.job_id,
                letter.job_attempt,
                command.reason or MANUAL,
                actor,
                not_before=requeue_not_before(now, index, command.rate_per_second),
            )
            for index, letter in enumerate(chosen)
        ]
        moved = await requeue_dead_jobs(connection, changes, requeues)
        done = [(letter.id, letter.job_id) for letter in chosen if letter.job_id in moved]
    else:
        action = ACTION_DISCARD
        open_ids = [letter.id for letter in letters if letter.resolved_at is None]
        resolved = await dead_letters.discard(connection, open_ids, actor)
        done = [(r.dead_letter_id, r.job_id) for r in resolved]
    summary = ActionRecord(
        ACTION_BULK[command.action],
        actor,
        command.reason,
        selector=command.selector,
        affected=len(done),
    )
    per_letter = [
        ActionRecord(action, actor, command.reason, letter_id, job_id) for letter_id, job_id in done
    ]
    await dead_letters.record_actions(connection, [summary, *per_letter])
    return len(done)
