"""Retention: finished jobs go once their status's retention has passed (``domain/retention.py``
says which may go), in bounded batches, with what goes with them; so do old inbox ids, poison
messages, schedule fires and dead-letter audit rows. With an archive, each job is written
there (``adapters/archive.py``) before its delete commits. Each call is one transaction, at most
``limit`` rows a table; a full batch makes the sweep run again at once (``api/sweeps.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_scheduler.adapters import jobs, retention, store_stats
from jobs_scheduler.adapters.archive import JobArchive, read_records
from jobs_scheduler.adapters.metrics import (
    RETENTION_BEHIND,
    RETENTION_OLDEST,
    RETENTION_PRUNED,
)
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.domain.retention import Retention


@dataclass(frozen=True)
class Windows:
    """How long the rows beside the jobs are kept (zero: forever)."""

    inbox: timedelta
    poison: timedelta
    audit: timedelta


async def prune(
    connection: AsyncConnection,
    _: Changes,
    keep: Retention,
    windows: Windows,
    limit: int,
    archive: JobArchive | None = None,
    pruned: Callable[[str, int], None] | None = None,
) -> int:
    """One pass: at most ``limit`` rows of each kind. Returns how many jobs and rows beside
    them it removed (the sweep runs again at once while that fills a batch). ``pruned`` is
    told the rows removed by table (the store upkeep maintains those tables,
    ``app/store_upkeep.py``)."""
    removed_by_table: dict[str, int] = {}
    now = await jobs.database_now(connection)
    cutoffs = keep.cutoffs(now)
    removed_in_all = 0
    for status in cutoffs:
        found = await retention.lock_prunable(connection, status, cutoffs, limit)
        if archive is not None and found:  # on disk before the delete commits
            records = await read_records(connection, [job_id for job_id, _ in found], now)
            await asyncio.to_thread(archive.append, records, now)
        removed = await retention.delete_jobs(connection, found)
        for table, count in removed.items():
            RETENTION_PRUNED.labels(table).inc(count)
            removed_by_table[table] = removed_by_table.get(table, 0) + count
        removed_in_all += len(found)
        oldest = await retention.oldest_finished(connection, status)
        RETENTION_OLDEST.labels(status.value).set(
            0.0 if oldest is None else (now - oldest).total_seconds()
        )
        behind = await retention.oldest_due(connection, status, cutoffs)
        RETENTION_BEHIND.labels(status.value).set(
            0.0 if behind is None else (cutoffs[status] - behind).total_seconds()
        )
    # A fire time older than every job retention is never fired again.
    longest = max(keep.by_status().values(), default=timedelta(0))
    aged = {
        "inbox": windows.inbox,
        "poison_messages": windows.poison,
        "dead_letter_actions": windows.audit,
        "schedule_fires": longest,
    }
    for table, window in aged.items():
        if window > timedelta(0):
            count = await retention.delete_older(connection, table, now - window, limit)
            RETENTION_PRUNED.labels(table).inc(count)
            removed_by_table[table] = count
            removed_in_all += count
    if removed_in_all:
        await store_stats.flush_own_stats(connection)  # the dead rows seen once committed
    if pruned is not None:
        for table, count in removed_by_table.items():
            pruned(table, count)
    return removed_in_all
