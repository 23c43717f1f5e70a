"""commit_retried: a statement off the consumers' path tried again when the next try may
succeed, the last error propagated."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_scheduler.adapters.retried import commit_retried, lock_conflict

pytestmark = pytest.mark.integration

DEADLOCK = text("DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40P01'; END $$")


async def test_a_deadlock_victim_is_tried_again_and_other_errors_are_not(db: AsyncEngine) -> None:
    tries: list[int] = []

    async def deadlocked_once(connection: AsyncConnection) -> int:
        tries.append(1)
        if len(tries) == 1:  # PostgreSQL's own error, as a deadlock victim gets it
            await connection.execute(DEADLOCK)
        return int((await connection.execute(text("SELECT 7"))).scalar_one())

    assert await commit_retried(db, deadlocked_once, pause=0.01, retry_if=lock_conflict) == 7
    assert len(tries) == 2

    tries.clear()

    async def broken(connection: AsyncConnection) -> None:
        tries.append(1)
        await connection.execute(text("SELECT 1/0"))

    with pytest.raises(DBAPIError):
        await commit_retried(db, broken, pause=0.01, retry_if=lock_conflict)
    assert len(tries) == 1  # not a conflict: not tried again

    tries.clear()
    with pytest.raises(DBAPIError):
        await commit_retried(db, broken, attempts=3, pause=0.01)  # any error: tried again
    assert len(tries) == 3
