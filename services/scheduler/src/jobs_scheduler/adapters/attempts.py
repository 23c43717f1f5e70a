"""The attempt rows (``job_attempts``): the only module that writes them.

An attempt row is created ``queued`` with its dispatch (:func:`insert_queued`, flushed with
the batch's other rows by ``changes.Changes``), goes ``running`` when its worker's start is
applied (:func:`start`), and ends once: ``succeeded`` with its worker's result
(:func:`succeed`), or ``failed`` / ``timed_out`` / ``lost`` / ``expired`` / ``cancelled``
(:func:`finish`, :func:`cancel_unstarted`). Every statement here has a text that does not
depend on the number of rows. ``tests/unit/test_scheduler_status_writer.py`` keeps every
other module from writing the table.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import DateTime, Integer, Text, func, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobResult
from jobs_common.jobstore import job_attempts
from jobs_scheduler.adapters.set_based import ArrayRows

_ID = UUID(as_uuid=True)

QUEUED = ArrayRows("attempts", job_id=_ID, attempt=Integer(), status=Text())
INSERT_QUEUED = QUEUED.insert_into(job_attempts).on_conflict_do_nothing()

STARTED = ArrayRows(
    "started", id=_ID, attempt=Integer(), worker_id=Text(), started_at=DateTime(timezone=True)
)
START = (
    update(job_attempts)
    .where(job_attempts.c.job_id == STARTED.c.id, job_attempts.c.attempt == STARTED.c.attempt)
    .values(status="running", worker_id=STARTED.c.worker_id, started_at=STARTED.c.started_at)
)

DONE = ArrayRows(
    "done",
    id=_ID,
    attempt=Integer(),
    worker_id=Text(),
    started_at=DateTime(timezone=True),
    finished_at=DateTime(timezone=True),
)
SUCCEED = (
    update(job_attempts)
    .where(job_attempts.c.job_id == DONE.c.id, job_attempts.c.attempt == DONE.c.attempt)
    .values(
        status="succeeded",
        # A quick attempt's JobRunning never came (the worker sends it only after a delay):
        # its result says where and when it started.
        worker_id=func.coalesce(job_attempts.c.worker_id, DONE.c.worker_id),
        started_at=func.coalesce(job_attempts.c.started_at, DONE.c.started_at),
        finished_at=DONE.c.finished_at,
        error_class=None,
        error=None,
        duration_ms=func.floor(
            func.extract(
                "epoch",
                DONE.c.finished_at
                - func.coalesce(job_attempts.c.started_at, DONE.c.started_at, DONE.c.finished_at),
            )
            * 1000
        ),
    )
)


async def insert_queued(
    connection: AsyncConnection, rows: Sequence[tuple[uuid.UUID, int, str]]
) -> None:
    """New attempt rows ``(job_id, attempt, "queued")``; one already there is left alone."""
    await connection.execute(INSERT_QUEUED, QUEUED.params(rows))


async def start(connection: AsyncConnection, starts: Iterable[Any]) -> None:
    """The attempts whose start was applied run on their worker (the last start of an
    attempt names its current worker). ``starts`` have ``job_id``, ``attempt``,
    ``worker_id`` and ``started_at``."""
    await connection.execute(
        START, STARTED.params((s.job_id, s.attempt, s.worker_id, s.started_at) for s in starts)
    )


async def succeed(connection: AsyncConnection, reports: Iterable[JobResult]) -> None:
    """The attempts that succeeded, with their worker and times from the reports."""
    await connection.execute(
        SUCCEED,
        DONE.params(
            (m.job_id, m.attempt, m.worker_id, m.started_at, m.finished_at) for m in reports
        ),
    )


async def finish(
    connection: AsyncConnection,
    job_id: uuid.UUID,
    attempt: int,
    *,
    status: str,
    error_class: str | None = None,
    error: str | None = None,
    finished_at: Any = None,
    worker_id: str | None = None,
    started_at: Any = None,
) -> None:
    """End an attempt row. A worker's report also says where and when it started, kept
    where the row has none (a quick attempt's JobRunning never came)."""
    finished = finished_at if finished_at is not None else func.now()
    reported: dict[str, Any] = {}
    if worker_id is not None:
        reported["worker_id"] = func.coalesce(job_attempts.c.worker_id, worker_id)
    if started_at is not None:
        reported["started_at"] = func.coalesce(job_attempts.c.started_at, started_at)
    await connection.execute(
        update(job_attempts)
        .where(job_attempts.c.job_id == job_id, job_attempts.c.attempt == attempt)
        .values(
            **reported,
            status=status,
            finished_at=finished,
            error_class=error_class,
            error=error,
            duration_ms=func.floor(
                func.extract("epoch", finished - func.coalesce(job_attempts.c.started_at, finished))
                * 1000
            ),
        )
    )


async def cancel_unstarted(connection: AsyncConnection, job_id: uuid.UUID, attempt: int) -> None:
    """The attempt of a job cancelled before a worker ran it ends ``cancelled``."""
    await connection.execute(
        update(job_attempts)
        .where(
            job_attempts.c.job_id == job_id,
            job_attempts.c.attempt == attempt,
            job_attempts.c.finished_at.is_(None),
        )
        .values(status="cancelled", finished_at=func.now())
    )
