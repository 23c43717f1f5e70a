"""A project's usage per UTC day (docs/flow-control.md, "Usage"): the usage sweep folds the
deltas the scheduler's transactions appended (``side_rows.Changes.used``) into
``project_usage``, at most ``batch`` deltas per transaction. Several replicas fold side by side:
each takes deltas no other holds (``SKIP LOCKED``), and adding to a day's row waits for its
lock, never loses a count."""

from __future__ import annotations

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncConnection

FOLD = text(
    """
    WITH taken AS (
      DELETE FROM usage_deltas WHERE id IN (
        SELECT id FROM usage_deltas ORDER BY id LIMIT :batch FOR UPDATE SKIP LOCKED
      )
      RETURNING project_id, day, submitted, attempts, run_seconds, succeeded, dead
    ),
    folded AS (
      INSERT INTO project_usage AS u
        (project_id, day, submitted, attempts, run_seconds, succeeded, dead)
      SELECT project_id, day, sum(submitted), sum(attempts), sum(run_seconds), sum(succeeded),
             sum(dead)
      FROM taken GROUP BY project_id, day ORDER BY project_id, day
      ON CONFLICT (project_id, day) DO UPDATE SET
        submitted = u.submitted + excluded.submitted,
        attempts = u.attempts + excluded.attempts,
        run_seconds = u.run_seconds + excluded.run_seconds,
        succeeded = u.succeeded + excluded.succeeded,
        dead = u.dead + excluded.dead
      RETURNING 1
    )
    SELECT count(*) FROM taken
    """
).bindparams(bindparam("batch"))


async def fold_usage(connection: AsyncConnection, batch: int) -> int:
    """Fold up to ``batch`` deltas; how many."""
    return int(await connection.scalar(FOLD, {"batch": batch}) or 0)
