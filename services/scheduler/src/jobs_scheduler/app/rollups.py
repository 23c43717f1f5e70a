"""Rollups: fold the deltas the triggers on ``jobs`` appended (``adapters/rollups.py``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_scheduler.adapters import rollups
from jobs_scheduler.adapters.metrics import ROLLUP_FOLDED


async def fold_rollups(connection: AsyncConnection, limit: int) -> int:
    """One transaction's fold: at most ``limit`` deltas of each kind (a full batch makes the
    sweep run again at once, ``api/sweeps.py``)."""
    folded = await rollups.fold(connection, limit)
    ROLLUP_FOLDED.inc(folded)
    return folded
