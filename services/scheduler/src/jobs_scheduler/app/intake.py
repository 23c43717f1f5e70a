"""Recording the jobs of ``JobsSubmitted`` messages: all of a batch at once, or, when one of
them cannot be recorded, job by job, so a job PostgreSQL refuses (bad data) is stored as
poison alone instead of taking the other jobs of its message with it.

Only data errors are blamed on a job. Anything else (the database gone, a deadlock) aborts
the whole batch, and the consumer's ack policy requeues its messages.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import fields

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common import topology
from jobs_common.contracts import JobSubmitted
from jobs_scheduler.adapters import logs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.recording import record_submissions
from jobs_scheduler.domain.defaults import JobDefaults

log = logging.getLogger(__name__)

# SQLSTATE classes a job's own data can cause (data exception, integrity constraint).
BAD_DATA_CLASSES = ("22", "23")


def caused_by_the_job(exc: Exception) -> bool:
    """Would recording this job fail again whatever else happens (its data), or was it the
    database (gone, deadlocked), which a retry may get past?"""
    if isinstance(exc, DBAPIError):
        sqlstate = getattr(exc.orig, "sqlstate", None) or ""
        return sqlstate[:2] in BAD_DATA_CLASSES
    return isinstance(exc, ValueError)  # e.g. a stored retry policy that cannot be used


def absorb(target: Changes, source: Changes) -> None:
    """Add the side rows ``source`` gathered to ``target``."""
    for field in fields(Changes):
        getattr(target, field.name).extend(getattr(source, field.name))


async def record_jobs(
    connection: AsyncConnection,
    changes: Changes,
    jobs: Sequence[JobSubmitted],
    defaults: JobDefaults,
) -> Counter[str]:
    """Record ``jobs`` (one statement for the batch); returns applied/duplicate/poison counts.

    Several jobs are recorded under a savepoint, so that one PostgreSQL refuses can be split
    off; a lone job needs none (its failure fails the transaction either way), which saves two
    round trips for the transactions of one job that light load makes."""
    if len(jobs) == 1:
        inserted = await record_submissions(connection, changes, jobs, defaults)
        return Counter(applied=inserted, duplicate=1 - inserted)
    scratch = Changes()
    try:
        async with connection.begin_nested():
            inserted = await record_submissions(connection, scratch, jobs, defaults)
    except Exception as exc:
        if not caused_by_the_job(exc):
            raise  # the ack policy requeues, and past its limit stores the message as poison
        log.warning(
            "batch of submissions refused; recording job by job",
            extra={"action": "intake_split", "size": len(jobs)},
            exc_info=True,
        )
        return await _one_by_one(connection, changes, jobs, defaults)
    absorb(changes, scratch)
    return Counter(applied=inserted, duplicate=len(jobs) - inserted)


async def _one_by_one(
    connection: AsyncConnection,
    changes: Changes,
    jobs: Sequence[JobSubmitted],
    defaults: JobDefaults,
) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    for job in jobs:
        scratch = Changes()
        try:
            async with connection.begin_nested():
                inserted = await record_submissions(connection, scratch, [job], defaults)
        except Exception as exc:
            if not caused_by_the_job(exc):
                raise
            log.error(
                "submitted job refused; stored as poison",
                extra={"action": "poison", "job_id": str(job.job_id), "error": repr(exc)[:500]},
            )
            await logs.record_poison(
                connection,
                queue=topology.SUBMITTED,
                message_id=str(job.message_id),
                reason=f"job {job.job_id} not recorded: {exc}"[:2000],
                body=job.to_json(),
                headers={"trace_id": job.trace_id},
            )
            outcomes["poison"] += 1
            continue
        absorb(changes, scratch)
        outcomes["applied" if inserted else "duplicate"] += 1
    return outcomes
