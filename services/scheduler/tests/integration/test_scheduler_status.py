"""The status writer on a real database: the guard, the attempt fence, the events of the rows
actually written, one statement per call whatever its size."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import jobs
from jobs_scheduler.adapters.jobs import NEXT_ATTEMPT
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import STATUS_ONLY, Transition, apply_transitions
from jobs_scheduler.domain.transitions import IllegalTransition

from .test_scheduler_set_based import statements, writes

pytestmark = pytest.mark.integration

S = JobStatus


async def new_jobs(db: AsyncEngine, count: int, *, status: S, attempt: int) -> list[uuid.UUID]:
    ids = sorted(uuid.uuid4() for _ in range(count))
    async with db.begin() as connection:
        await connection.execute(
            insert(jobs),
            [
                {
                    "id": i,
                    "type": "simulate",
                    "priority": 2,
                    "payload": {},
                    "submitted_by": "u@test.com",
                    "status": status.value,
                    "attempt": attempt,
                    "max_attempts": 3,
                    "attempt_limit": 3,
                    "timeout_seconds": 30,
                }
                for i in ids
            ],
        )
    return ids


async def rows(db: AsyncEngine, ids: list[uuid.UUID]) -> dict[uuid.UUID, Any]:
    async with db.connect() as connection:
        result = await connection.execute(
            select(jobs.c.id, jobs.c.status, jobs.c.attempt).where(jobs.c.id.in_(ids))
        )
        return {row.id: (row.status, row.attempt) for row in result}


async def test_a_row_that_moved_meanwhile_is_not_written_and_gets_no_event(
    db: AsyncEngine,
) -> None:
    fresh, moved, other_attempt = await new_jobs(db, 3, status=S.QUEUED, attempt=1)
    async with db.begin() as connection:
        await connection.execute(
            update(jobs).where(jobs.c.id == moved).values(status=S.CANCELLED.value)
        )
    changes = Changes()
    async with db.begin() as connection:
        written = await apply_transitions(
            connection,
            changes,
            [
                Transition(fresh, S.QUEUED, S.SCHEDULED, "later", attempt=1),
                Transition(moved, S.QUEUED, S.SCHEDULED, "later", attempt=1),
                Transition(other_attempt, S.QUEUED, S.SCHEDULED, "later", attempt=2),
            ],
        )
    assert set(written) == {(fresh, 1)}
    assert changes.events == [(fresh, 1, "queued", "scheduled", "later")]
    assert await rows(db, [fresh, moved, other_attempt]) == {
        fresh: ("scheduled", 1),
        moved: ("cancelled", 1),
        other_attempt: ("queued", 1),
    }


async def test_an_illegal_move_raises_before_anything_is_written(db: AsyncEngine) -> None:
    legal, illegal = await new_jobs(db, 2, status=S.QUEUED, attempt=1)
    changes = Changes()
    with statements(db) as seen, pytest.raises(IllegalTransition):
        async with db.begin() as connection:
            await apply_transitions(
                connection,
                changes,
                [
                    Transition(legal, S.QUEUED, S.RUNNING, "started", attempt=1),
                    Transition(illegal, S.QUEUED, S.BLOCKED, "not an edge", attempt=1),
                ],
            )
    assert not [s for s in seen if s.lstrip().upper().startswith("UPDATE")]
    assert changes.events == []
    assert await rows(db, [legal, illegal]) == {legal: ("queued", 1), illegal: ("queued", 1)}


async def test_events_carry_every_step_and_the_attempt_written(db: AsyncEngine) -> None:
    (job,) = await new_jobs(db, 1, status=S.BLOCKED, attempt=0)
    changes = Changes()
    async with db.begin() as connection:
        written = await apply_transitions(
            connection,
            changes,
            [Transition(job, S.BLOCKED, S.QUEUED, "dispatched", via=((S.PENDING, "ready"),))],
            NEXT_ATTEMPT,
        )
    assert written[(job, None)].attempt == 1
    assert written[(job, None)].type == "simulate"  # the write's returning columns
    assert changes.events == [
        (job, 1, "blocked", "pending", "ready"),
        (job, 1, "pending", "queued", "dispatched"),
    ]
    assert await rows(db, [job]) == {job: ("queued", 1)}


async def test_one_statement_with_one_text_whatever_the_number_of_moves(db: AsyncEngine) -> None:
    ids = await new_jobs(db, 10, status=S.SCHEDULED, attempt=0)
    texts = []
    for batch in (ids[:3], ids[3:]):
        with statements(db) as seen, writes(db) as counted:
            async with db.begin() as connection:
                written = await apply_transitions(
                    connection,
                    Changes(),
                    [Transition(i, S.SCHEDULED, S.QUEUED, "due") for i in batch],
                    STATUS_ONLY,
                )
        assert len(written) == len(batch)
        assert counted == {"UPDATE jobs": 1}
        texts.append(seen)
    assert texts[0] == texts[1]
