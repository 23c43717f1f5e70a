"""Side rows of one transaction (events, attempts, dispatches, control messages, dead letters),
written together with multi-row statements when the transaction's batch is done."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Any, NamedTuple

from sqlalchemy import Date, Float, Integer, LargeBinary, Text, func, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import (
    FRESH_DISPATCH,
    PARENT_RESULTS_MAX_BYTES,
    CancelAttempt,
    ClaimVerdict,
    JobDispatch,
    JobLogLine,
    JobStatus,
    Message,
    utcnow,
)
from jobs_common.jobstore import dead_letters, job_events, jobs, outbox, usage_deltas
from jobs_common.topology import (
    CONTROL_CANCEL,
    CONTROL_CLAIM,
    EVENTS_EXCHANGE,
    JOBS_EXCHANGE,
    lane_for,
    ready_queue_for,
)
from jobs_scheduler.adapters import attempts, parent_results
from jobs_scheduler.adapters.set_based import ArrayRows, any_of
from jobs_scheduler.domain.fingerprint import fingerprint
from jobs_scheduler.domain.transitions import transition

_ID = UUID(as_uuid=True)
EVENTS = ArrayRows(
    "events", job_id=_ID, attempt=Integer(), from_status=Text(), to_status=Text(), reason=Text()
)
MESSAGES = ArrayRows(
    "messages",
    job_id=_ID,
    exchange=Text(),
    routing_key=Text(),
    message_id=_ID,
    message_type=Text(),
    trace_id=Text(),
    body=LargeBinary(),
    project_id=_ID,
    queue=Text(),
)
USAGE = ArrayRows(
    "usage",
    project_id=_ID,
    day=Date(),
    submitted=Integer(),
    attempts=Integer(),
    run_seconds=Float(),
    succeeded=Integer(),
    dead=Integer(),
)
INSERT_USAGE = USAGE.insert_into(usage_deltas)
# A project's usage of a day, in the order of USAGE's measures.
SUBMITTED, ATTEMPTS, RUN_SECONDS, SUCCEEDED, DEAD = range(5)
INSERT_EVENTS = EVENTS.insert_into(job_events)
INSERT_MESSAGES = MESSAGES.insert_into(outbox)
# The reconciler's clock starts with the dispatch. The reconciler leaves a job alone while its
# dispatch is still in the outbox, and the relay restarts the clock of a dispatch that waited
# there long (outbox_relay.py), so the clock runs from about when the broker took the message.
START_CLOCKS = (
    update(jobs).where(jobs.c.id == any_of("dispatched", _ID)).values(queued_at=func.now())
)


class LiveChange(NamedTuple):
    """A status change as live views see it (``JobChange``), published after the commit."""

    job_id: uuid.UUID
    attempt: int
    from_status: str | None
    to_status: str
    reason: str
    job_type: str
    submitted_by: str
    at: datetime
    trace_id: str | None = None  # the job's, for its log line (adapters/job_log.py)
    project_id: uuid.UUID | None = None  # whose members see it live (docs/tenancy.md)


@dataclass
class Changes:
    # Rows in the column order of EVENTS, ATTEMPTS and MESSAGES.
    events: list[tuple[Any, ...]] = field(default_factory=list)
    attempts: list[tuple[Any, ...]] = field(default_factory=list)
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    dispatched: list[uuid.UUID] = field(default_factory=list)
    dead: list[dict[str, Any]] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)
    # For live views, published once the transaction committed (adapters/live.py).
    live: list[LiveChange] = field(default_factory=list)
    lines: list[JobLogLine] = field(default_factory=list)
    # Attempt timings, observed once the transaction committed (adapters/job_metrics.py):
    # (job type, priority, seconds from dispatch to start) and (job type, seconds run).
    waits: list[tuple[str, int, float]] = field(default_factory=list)
    runs: list[tuple[str, float]] = field(default_factory=list)
    # Dispatches of jobs with parents, published at the flush with their parents' results
    # (one read for all): (message, routing key, project, queue).
    with_parents: list[tuple[JobDispatch, str, uuid.UUID | None, str | None]] = field(
        default_factory=list
    )
    # Each project's usage of the day (docs/flow-control.md, "Usage"): USAGE's measures.
    usage: dict[tuple[uuid.UUID, date], list[float]] = field(default_factory=dict)

    def absorb(self, other: Changes) -> None:
        """Add the side rows ``other`` gathered to these."""
        for name in CHANGES_LISTS:
            getattr(self, name).extend(getattr(other, name))
        for key, row in other.usage.items():
            mine = self.usage.setdefault(key, [0, 0, 0.0, 0, 0])
            for measure, amount in enumerate(row):
                mine[measure] += amount

    def used(self, project_id: uuid.UUID | None, measure: int, amount: float = 1) -> None:
        if project_id is None:
            return
        day = utcnow().date()
        self.usage.setdefault((project_id, day), [0, 0, 0.0, 0, 0])[measure] += amount

    def move(
        self,
        job_id: uuid.UUID,
        attempt: int,
        current: JobStatus | None,
        target: JobStatus,
        reason: str,
        *,
        job_type: str,
        submitted_by: str,
        trace_id: str | None = None,
        project_id: uuid.UUID | None = None,
    ) -> JobStatus:
        """Check ``current -> target`` against the table and record the event. Called by the
        status writer (``status.py``) for the rows it wrote, and by no one else."""
        transition(current, target)
        source = None if current is None else current.value
        reason = reason[:500]
        self.events.append((job_id, attempt, source, target.value, reason))
        self.moves.append((source or "none", target.value))
        if current is None:
            self.used(project_id, SUBMITTED)
        elif target is JobStatus.SUCCEEDED:
            self.used(project_id, SUCCEEDED)
        elif target is JobStatus.DEAD:
            self.used(project_id, DEAD)
        self.live.append(
            LiveChange(
                job_id,
                attempt,
                source,
                target.value,
                reason,
                job_type,
                submitted_by,
                utcnow(),
                trace_id,
                project_id,
            )
        )
        return target

    def attempt_started(
        self, *, job_type: str, priority: int, queued_at: datetime | None, started_at: datetime
    ) -> None:
        """An attempt left its ready queue: it waited from its dispatch (``jobs.queued_at``,
        the database clock) to its start (the worker's clock); a clock skew counts as 0."""
        if queued_at is not None:
            waited = max(0.0, (started_at - queued_at).total_seconds())
            self.waits.append((job_type, priority, waited))

    def attempt_ran(
        self,
        *,
        job_type: str,
        started_at: datetime,
        finished_at: datetime,
        project_id: uuid.UUID | None = None,
    ) -> None:
        """An attempt ended with a worker's result, which says when it started and finished."""
        ran = max(0.0, (finished_at - started_at).total_seconds())
        self.runs.append((job_type, ran))
        self.used(project_id, RUN_SECONDS, ran)

    def _publish(
        self,
        exchange: str,
        routing_key: str,
        message: Message,
        job_id: uuid.UUID | None = None,
        queue: tuple[uuid.UUID | None, str | None] = (None, None),
    ) -> None:
        """``queue``: a ready dispatch's project and queue (the relay's pause gate)."""
        self.messages.append(
            (
                job_id,
                exchange,
                routing_key,
                message.message_id,
                getattr(message, "type", "message"),
                message.trace_id,
                message.to_json(),
                *queue,
            )
        )

    def dispatch(
        self,
        job: Any,
        *,
        attempt: int,
        new_attempt: bool,
        payload: dict[str, Any] | None = None,
        resent_after: datetime | None = None,
        lane: bool = False,
        clock_started: bool = False,
    ) -> None:
        """Queue a JobDispatch for ``job`` (a row with id, type, priority, payload...).

        ``resent_after``: the attempt was dispatched before, at about that time (a hand-back,
        a release from waiting): the message is marked ``resent`` and dated then, so the worker
        claims it as a copy. ``lane``: to the type's lane (only its workers consume it).
        ``clock_started``: the row was written with its ``queued_at`` (a new job's)."""
        now = utcnow()
        message = JobDispatch(
            job_id=job.id,
            attempt=attempt,
            job_type=job.type,
            priority=job.priority,
            payload=payload if payload is not None else job.payload,
            timeout_seconds=job.timeout_seconds,
            dispatched_at=resent_after or now,
            fresh_until=now + FRESH_DISPATCH,
            resent=resent_after is not None,
            trace_id=job.trace_id or uuid.uuid4().hex,
            submitted_by=job.submitted_by,
            project_id=job.project_id,
        )
        key = lane_for(job.type) if lane else ready_queue_for(job.priority, job.queue)
        if job.has_parents:  # its parents' results are read at the flush, for all at once
            self.with_parents.append((message, key, job.project_id, job.queue))
        else:
            self._publish(JOBS_EXCHANGE, key, message, job.id, (job.project_id, job.queue))
        if not clock_started:
            self.dispatched.append(job.id)
        if new_attempt:
            self.attempts.append((job.id, attempt, "queued"))
            self.used(job.project_id, ATTEMPTS)

    def cancel_attempt(
        self, job_id: uuid.UUID, attempt: int | None, reason: str, worker_id: str | None = None
    ) -> None:
        """Tell the workers (or only ``worker_id``) to stop, or never start, this attempt."""
        self._publish(
            EVENTS_EXCHANGE,
            CONTROL_CANCEL,
            CancelAttempt(job_id=job_id, attempt=attempt, reason=reason, worker_id=worker_id),
        )

    def answer_claim(self, verdict: ClaimVerdict) -> None:
        """Answer a worker's claim of a redelivered attempt (``app/claims.py``)."""
        self._publish(EVENTS_EXCHANGE, CONTROL_CLAIM, verdict)

    def dead_letter(
        self, job: Any, *, attempt: int, reason: str, error: str | None, error_class: str | None
    ) -> None:
        self.dead.append(
            {
                "id": uuid.uuid4(),
                "job_id": job.id,
                "attempt": attempt,
                "reason": reason,
                "last_error": error,
                "last_error_class": error_class,
                "fingerprint": fingerprint(error_class, error),
                "payload_snapshot": {
                    "type": job.type,
                    "priority": job.priority,
                    "payload": job.payload,
                    "submittedBy": job.submitted_by,
                },
            }
        )

    async def flush(self, connection: AsyncConnection) -> None:
        """One statement per table, whatever the number of rows (see :class:`ArrayRows`)."""
        if self.attempts:
            await attempts.insert_queued(connection, self.attempts)
        if self.events:
            await connection.execute(INSERT_EVENTS, EVENTS.params(self.events))
        if self.with_parents:
            await self._publish_with_parents(connection)
        if self.messages:
            await connection.execute(INSERT_MESSAGES, MESSAGES.params(self.messages))
        if self.dispatched:
            await connection.execute(START_CLOCKS, {"dispatched": sorted(self.dispatched)})
        if self.dead:
            await connection.execute(insert(dead_letters), self.dead)
        if self.usage:
            await connection.execute(
                INSERT_USAGE,
                USAGE.params(
                    [
                        (*key, *(round(v) if i != RUN_SECONDS else v for i, v in enumerate(row)))
                        for key, row in sorted(self.usage.items())
                    ]
                ),
            )

    async def _publish_with_parents(self, connection: AsyncConnection) -> None:
        """The dispatches of jobs with parents, each with its parents' results."""
        waiting, self.with_parents = self.with_parents, []
        parents = await parent_results.parents_of(
            connection, (m.job_id for m, *_ in waiting), PARENT_RESULTS_MAX_BYTES
        )
        for message, key, project_id, queue in waiting:
            full = message.model_copy(update={"parents": parents.get(message.job_id, [])})
            self._publish(JOBS_EXCHANGE, key, full, message.job_id, (project_id, queue))


# The fields of Changes that are lists of rows (every one but ``usage``).
CHANGES_LISTS = tuple(f.name for f in fields(Changes) if f.name != "usage")
