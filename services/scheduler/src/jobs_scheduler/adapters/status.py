"""The one writer of ``jobs.status``.

Every change of a job's status is a :class:`Transition` applied by :func:`apply_transitions`:

1. each transition (with the statuses it passes through) is checked against the state
   machine (``domain/transitions.py``); an illegal one raises before anything is written: it
   is a programming error;
2. the rows are written with one ``UPDATE jobs ... FROM unnest(...)`` per call, guarded by
   the status the caller saw (and the attempt, when given): a row that moved meanwhile is not
   touched, and the caller treats its transition as stale;
3. the events of the rows actually written are recorded (:meth:`Changes.move`).

What a kind of move writes besides the status (a lease, a result, the next attempt number...)
is a :class:`Write`, declared once at module level by the module that owns that concept; its
statement is built once, and its text does not depend on the number of rows, so hot paths
(running, results) stay one statement per batch, compiled and prepared once.

A new job is not a change of status: ``recording.py`` inserts it with its first status and
records its first moves through :func:`record_creation`. A test fails when any other module
writes ``jobs.status`` (``tests/unit/test_scheduler_status_writer.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from sqlalchemy import Integer, Text, func, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import TypeEngine

from jobs_common.contracts import JobStatus
from jobs_common.jobstore import jobs
from jobs_scheduler.adapters.set_based import ArrayRows, any_of
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.domain.transitions import transition

S = JobStatus
Key: TypeAlias = tuple[uuid.UUID, int | None]
Written: TypeAlias = Row[*tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Transition:
    """Move job ``job_id`` from ``current`` (the status the caller saw, the write's guard) to
    ``target``, through the statuses of ``via`` (recorded, never written)."""

    job_id: uuid.UUID
    current: JobStatus
    target: JobStatus
    reason: str
    # The attempt the row must still be at (a fence), or None for whatever it is.
    attempt: int | None = None
    # The per-row columns of the write (:attr:`Write.columns`), by name.
    values: Mapping[str, Any] = field(default_factory=dict)
    # ``(status, reason)`` of each step between ``current`` and ``target``, e.g. a failed
    # attempt's ``running -> failed -> scheduled`` is ``running -> scheduled`` via failed.
    via: tuple[tuple[JobStatus, str], ...] = ()

    @property
    def key(self) -> Key:
        return (self.job_id, self.attempt)

    def steps(self) -> list[tuple[JobStatus, JobStatus, str]]:
        """Each ``(from, to, reason)`` step, in order."""
        steps = []
        previous = self.current
        for status, reason in self.via:
            steps.append((previous, status, reason))
            previous = status
        steps.append((previous, self.target, self.reason))
        return steps


Columns: TypeAlias = Any  # the row table's columns (``ArrayRows.c``)


class Write:
    """What one kind of move writes besides ``status`` and ``updated_at``.

    ``columns``: the per-row values it takes (passed as one array per column); ``sets``: the
    other columns it sets, as SQL built from those (``rows.worker_id``, ``func.now()``,
    ``jobs.c.attempt + 1``...); ``guards``: conditions beyond the status and attempt;
    ``returning``: the job columns the caller needs back (``id`` and ``attempt`` always).
    It may not set ``status``: only the writer does.
    """

    def __init__(
        self,
        name: str,
        *,
        columns: Mapping[str, TypeEngine[Any]] | None = None,
        sets: Callable[[Columns], Mapping[str, Any]] | None = None,
        guards: Callable[[Columns], Sequence[Any]] | None = None,
        returning: Sequence[Any] = (),
    ) -> None:
        self.name = name
        self.columns = tuple(columns or {})
        self.rows = ArrayRows(
            name,
            id=UUID(as_uuid=True),
            attempt=Integer(),
            current=Text(),
            target=Text(),
            **(columns or {}),
        )
        r = self.rows.c
        values = dict(sets(r)) if sets is not None else {}
        if {"status", "updated_at"} & {getattr(k, "key", k) for k in values}:
            raise ValueError(f"write {name!r}: status and updated_at are the writer's")
        self.statement = (
            update(jobs)
            .where(
                jobs.c.id == r.id,
                jobs.c.status == r.current,
                jobs.c.attempt == func.coalesce(r.attempt, jobs.c.attempt),
                *(guards(r) if guards is not None else ()),
            )
            .values(status=r.target, updated_at=func.now(), **values)
            .returning(
                r.attempt.label("fenced_attempt"),
                jobs.c.id,
                jobs.c.attempt,
                jobs.c.type,
                jobs.c.submitted_by,
                jobs.c.trace_id,
                jobs.c.project_id,
                *(c for c in returning if c.key not in ALWAYS_RETURNED),
            )
        )

    def params(self, transitions: Sequence[Transition]) -> dict[str, list[Any]]:
        rows = []
        for t in transitions:
            if len(t.values) != len(self.columns):
                raise ValueError(f"write {self.name!r} takes {self.columns}, got {set(t.values)}")
            rows.append(
                (
                    t.job_id,
                    t.attempt,
                    t.current.value,
                    t.target.value,
                    *(t.values[c] for c in self.columns),
                )
            )
        return self.rows.params(rows)


# Every write returns these (the status events and live views need them).
ALWAYS_RETURNED = ("id", "attempt", "type", "submitted_by", "trace_id", "project_id")

# A move that writes nothing but the status.
STATUS_ONLY = Write("moved")


def check(transitions: Sequence[Transition]) -> None:
    """Raise IllegalTransition for a move the state machine does not allow (a bug), and
    ValueError for two transitions of one job attempt in one call."""
    keys: set[Key] = set()
    unfenced: set[uuid.UUID] = set()
    fenced: set[uuid.UUID] = set()
    for t in transitions:
        for current, target, _ in t.steps():
            transition(current, target)
        if t.key in keys or t.job_id in unfenced or (t.attempt is None and t.job_id in fenced):
            raise ValueError(f"job {t.job_id} moved twice in one write")
        keys.add(t.key)
        (unfenced if t.attempt is None else fenced).add(t.job_id)


# Rows locked in job id order, the one lock order of every transaction that moves several
# jobs. An UPDATE ... FROM unnest locks in its plan's order (a hash join: the table's), not in
# the order of its rows, so a batch of starts and a batch of results deadlocked under load.
LOCK_IN_ID_ORDER = (
    select(jobs.c.id)
    .where(jobs.c.id == any_of("lock_ids", UUID(as_uuid=True)))
    .order_by(jobs.c.id)
    .with_for_update()
)


async def lock_in_id_order(connection: AsyncConnection, job_ids: Iterable[uuid.UUID]) -> None:
    """Lock the rows of ``job_ids`` (those that exist) in id order, for this transaction."""
    await connection.execute(LOCK_IN_ID_ORDER, {"lock_ids": sorted(set(job_ids))})


async def apply_transitions(
    connection: AsyncConnection,
    changes: Changes,
    transitions: Sequence[Transition],
    write: Write = STATUS_ONLY,
    params: Mapping[str, Any] | None = None,
    *,
    locked: bool = False,
) -> dict[Key, Written]:
    """Check, write (one statement), record. Returns the written rows (``write.returning``)
    by :attr:`Transition.key`; a transition missing from it found its row moved (stale).
    Several rows are locked in id order first unless the caller ``locked`` them already."""
    if not transitions:
        return {}
    check(transitions)
    ordered = sorted(transitions, key=lambda t: t.job_id)
    if not locked and len(ordered) > 1:
        await lock_in_id_order(connection, (t.job_id for t in ordered))
    result = await connection.execute(write.statement, write.params(ordered) | dict(params or {}))
    written: dict[Key, Written] = {(row.id, row.fenced_attempt): row for row in result}
    for t in transitions:
        row = written.get(t.key)
        if row is not None:
            for current, target, reason in t.steps():
                changes.move(
                    t.job_id,
                    row.attempt,
                    current,
                    target,
                    reason,
                    job_type=row.type,
                    submitted_by=row.submitted_by,
                    trace_id=row.trace_id,
                    project_id=row.project_id,
                )
    return written


def record_creation(
    changes: Changes,
    job_id: uuid.UUID,
    status: JobStatus,
    *,
    attempt: int,
    submitted: str,
    reason: str,
    job_type: str,
    submitted_by: str,
    trace_id: str | None = None,
    project_id: uuid.UUID | None = None,
) -> None:
    """The first moves of a job ``recording.py`` just inserted as ``status`` (at ``attempt``):
    from "does not exist" to ``pending`` (why it was recorded; no attempt yet), then to
    ``status`` (why), each checked against the state machine."""
    changes.move(
        job_id,
        0,
        None,
        S.PENDING,
        submitted,
        job_type=job_type,
        submitted_by=submitted_by,
        trace_id=trace_id,
        project_id=project_id,
    )
    changes.move(
        job_id,
        attempt,
        S.PENDING,
        status,
        reason,
        job_type=job_type,
        submitted_by=submitted_by,
        trace_id=trace_id,
        project_id=project_id,
    )
