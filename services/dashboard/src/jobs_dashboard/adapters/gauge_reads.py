"""The job store reads of the platform gauges (``jobs_dashboard.app.gauges``): each one cheap and
served by an index, run on a timer, never per scrape."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import dead_letters, job_events, jobs, queues
from jobs_common.queue_rows import UNFINISHED
from jobs_dashboard.adapters.store import Store

# Every attempt that ran ends with one of these moves (a failure before its retry or death).
ATTEMPT_ENDED = (JobStatus.SUCCEEDED.value, JobStatus.FAILED.value)


@dataclass(frozen=True)
class QueueFigures:
    """One project's queue as its gauges show it."""

    project_id: Any
    name: str
    max_concurrency: int | None
    paused: bool
    waiting: int
    running: int
    oldest_queued_at: datetime | None


class GaugeReads(Store):
    async def project_queues(self) -> tuple[datetime, list[QueueFigures]]:
        """The database's clock, and every project's queue with its unfinished jobs now
        (running; the rest; the oldest queued one's time): the unfinished jobs' index."""
        running = func.count().filter(jobs.c.status == "running")
        async with self.snapshot() as connection:
            now = (await connection.execute(select(func.now()))).scalar_one()
            counts = {
                (row[0], row[1]): (int(row[2]), int(row[3]), row[4])
                for row in await connection.execute(
                    select(
                        jobs.c.project_id,
                        jobs.c.queue,
                        func.count() - running,
                        running,
                        func.min(jobs.c.created_at).filter(jobs.c.status == "queued"),
                    )
                    .where(UNFINISHED)
                    .group_by(jobs.c.project_id, jobs.c.queue)
                )
            }
            rows = await connection.execute(
                select(
                    queues.c.project_id, queues.c.name, queues.c.max_concurrency, queues.c.paused
                )
            )
            figures = []
            for row in rows:
                waiting, in_run, oldest = counts.get((row.project_id, row.name), (0, 0, None))
                figures.append(
                    QueueFigures(
                        row.project_id,
                        row.name,
                        row.max_concurrency,
                        row.paused,
                        waiting,
                        in_run,
                        oldest,
                    )
                )
            return now, figures

    async def open_dead_letters(self) -> int:
        """Dead letters neither requeued nor discarded (``ix_dead_letters_open``)."""
        async with self.snapshot() as connection:
            count = await connection.execute(
                select(func.count())
                .select_from(dead_letters)
                .where(dead_letters.c.resolved_at.is_(None))
            )
            return int(count.scalar_one())

    async def attempts_ended(self, *, after: int | None) -> tuple[int, dict[int, int]]:
        """The newest ``job_events`` id, and per priority how many attempts ended in the events
        after ``after`` up to it (a primary-key range: only what happened since the last call;
        nothing when ``after`` is None, the first call). An event whose transaction commits after
        a later one was read is missed: the counts are an estimate."""
        async with self.snapshot() as connection:
            newest = await connection.execute(select(func.coalesce(func.max(job_events.c.id), 0)))
            upto = int(newest.scalar_one())
            if after is None or upto <= after:
                return upto, {}
            rows = await connection.execute(
                select(jobs.c.priority, func.count())
                .select_from(job_events.join(jobs, jobs.c.id == job_events.c.job_id))
                .where(
                    job_events.c.id > after,
                    job_events.c.id <= upto,
                    job_events.c.to_status.in_(ATTEMPT_ENDED),
                )
                .group_by(jobs.c.priority)
            )
            return upto, {int(priority): int(count) for priority, count in rows}
