"""What workers report about attempts: started, heartbeats, results; and the lease reaper."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, Integer, Text, column, func, or_, select, tuple_, update, values
from sqlalchemy.dialects.postgresql import JSONB, UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ErrorKind, JobResult, JobRunning, JobStatus, WorkerHeartbeat
from jobs_common.jobstore import job_attempts, jobs, workers
from jobs_scheduler.adapters.changes import Changes
from jobs_scheduler.adapters.jobs import (
    JOB_COLUMNS,
    JobDefaults,
    fail_attempt,
    finish_attempt,
    mark_cancelled,
    mark_dead,
)
from jobs_scheduler.domain.leases import verdict, worker_went_silent
from jobs_scheduler.domain.transitions import sources_of

S = JobStatus


def _seconds(value: Any) -> Any:
    return func.make_interval(0, 0, 0, 0, 0, 0, value)


def _vouched(sent_at: Any) -> Any:
    """The moment a worker's message vouches for (:func:`domain.leases.renewed_at` in SQL):
    its own timestamp, never later than now."""
    return func.least(sent_at, func.now())


def _running_rows(messages: Sequence[JobRunning]) -> Any:
    """The messages as a VALUES list (id, attempt, worker_id, started_at) to join on."""
    return values(
        column("id", UUID(as_uuid=True)),
        column("attempt", Integer),
        column("worker_id", Text),
        column("started_at", DateTime(timezone=True)),
        name="started",
    ).data([(m.job_id, m.attempt, m.worker_id, m.started_at) for m in messages])


async def apply_running(
    connection: AsyncConnection,
    changes: Changes,
    messages: Sequence[JobRunning],
    defaults: JobDefaults,
) -> list[bool]:
    """Attempts that started on a worker, set-based: one UPDATE of the jobs, one of their
    attempt rows. A redelivered attempt that already runs elsewhere is taken over; anything
    else matching no queued attempt is stale. Returns, per message, whether it applied."""
    firsts: dict[tuple[Any, int], JobRunning] = {}
    later: list[JobRunning] = []  # more messages for an attempt seen earlier in the batch
    for message in messages:
        key = (message.job_id, message.attempt)
        if key in firsts:
            later.append(message)
        else:
            firsts[key] = message
    unique = list(firsts.values())
    started_rows = _running_rows(unique)
    started = {
        (row.id, row.attempt)
        for row in await connection.execute(
            update(jobs)
            .where(
                jobs.c.id == started_rows.c.id,
                jobs.c.attempt == started_rows.c.attempt,
                jobs.c.status == S.QUEUED.value,
            )
            .values(
                status=S.RUNNING.value,
                worker_id=started_rows.c.worker_id,
                started_at=started_rows.c.started_at,
                lease_expires_at=_vouched(started_rows.c.started_at)
                + _seconds(defaults.lease_seconds),
                deadline_at=_vouched(started_rows.c.started_at)
                + _seconds(jobs.c.timeout_seconds + defaults.timeout_grace_seconds),
                updated_at=func.now(),
            )
            .returning(jobs.c.id, jobs.c.attempt)
        )
    }
    applied: list[JobRunning] = []
    for message in sorted(unique, key=lambda m: m.job_id):
        if (message.job_id, message.attempt) in started:
            changes.move(
                message.job_id,
                message.attempt,
                S.QUEUED,
                S.RUNNING,
                f"started on {message.worker_id}",
            )
            applied.append(message)
        elif await _taken_over(connection, changes, message, defaults):
            applied.append(message)
    for message in later:
        if await _taken_over(connection, changes, message, defaults):
            applied.append(message)
    if applied:
        # The last applied message of an attempt names its current worker.
        attempt_rows = _running_rows(list({(m.job_id, m.attempt): m for m in applied}.values()))
        await connection.execute(
            update(job_attempts)
            .where(
                job_attempts.c.job_id == attempt_rows.c.id,
                job_attempts.c.attempt == attempt_rows.c.attempt,
            )
            .values(
                status="running",
                worker_id=attempt_rows.c.worker_id,
                started_at=attempt_rows.c.started_at,
            )
        )
    applied_ids = {id(m) for m in applied}
    return [id(m) in applied_ids for m in messages]


async def _taken_over(
    connection: AsyncConnection, changes: Changes, message: JobRunning, defaults: JobDefaults
) -> bool:
    if not message.redelivered or not await _take_over(connection, message, defaults):
        return False
    changes.move(
        message.job_id,
        message.attempt,
        S.RUNNING,
        S.RUNNING,
        f"redelivered; taken over by {message.worker_id}",
    )
    return True


async def _take_over(
    connection: AsyncConnection, message: JobRunning, defaults: JobDefaults
) -> bool:
    """The broker redelivered a running attempt: its worker's connection died. The new
    worker continues the same attempt, under a fresh lease."""
    taken = await connection.execute(
        update(jobs)
        .where(
            jobs.c.id == message.job_id,
            jobs.c.attempt == message.attempt,
            jobs.c.status == S.RUNNING.value,
            jobs.c.worker_id != message.worker_id,
            jobs.c.cancel_requested_at.is_(None),
        )
        .values(
            worker_id=message.worker_id,
            lease_expires_at=_vouched(message.started_at) + _seconds(defaults.lease_seconds),
            updated_at=func.now(),
        )
        .returning(jobs.c.id)
    )
    return taken.first() is not None


def _result_rows(messages: Sequence[JobResult]) -> Any:
    """Successful results as a VALUES list to join on."""
    return values(
        column("id", UUID(as_uuid=True)),
        column("attempt", Integer),
        column("result", JSONB),
        column("worker_id", Text),
        column("started_at", DateTime(timezone=True)),
        column("finished_at", DateTime(timezone=True)),
        name="done",
    ).data(
        [
            (m.job_id, m.attempt, m.result or {}, m.worker_id, m.started_at, m.finished_at)
            for m in messages
        ]
    )


async def apply_results(
    connection: AsyncConnection,
    changes: Changes,
    messages: Sequence[JobResult],
    defaults: JobDefaults,
) -> Counter[str]:
    """Attempts that ended on a worker. The attempts' jobs are locked in one statement (in id
    order); successes, the common case, are written with one UPDATE of the jobs and one of
    their attempt rows; failures and cancellations go through the failure policy one by one.
    A result for an attempt that is no longer current, or from a worker that lost the
    attempt to a takeover, is stale."""
    outcomes: Counter[str] = Counter()
    reported: dict[tuple[Any, int], list[JobResult]] = {}
    for message in messages:
        reported.setdefault((message.job_id, message.attempt), []).append(message)
    sources = tuple(set(sources_of(S.SUCCEEDED)) & set(sources_of(S.FAILED)))
    locked = (
        await connection.execute(
            select(*JOB_COLUMNS)
            .where(
                tuple_(jobs.c.id, jobs.c.attempt).in_(list(reported)), jobs.c.status.in_(sources)
            )
            .order_by(jobs.c.id)
            .with_for_update()
        )
    ).all()
    succeeded: list[JobResult] = []
    for job in locked:
        current = S(job.status)
        # Of several reports of one attempt, only its holder's counts: the attempt may have
        # been handed over to another worker (a redelivery), and the one that lost it reports
        # too. A queued attempt (its running message not applied yet) takes the first.
        report = next(
            (
                m
                for m in reported[(job.id, job.attempt)]
                if current is not S.RUNNING or job.worker_id in (None, m.worker_id)
            ),
            None,
        )
        if report is None:
            continue
        outcomes["applied"] += 1
        if report.outcome == "succeeded":
            changes.move(job.id, job.attempt, current, S.SUCCEEDED, "succeeded")
            succeeded.append(report)
        else:
            await _attempt_failed(connection, changes, job, report, defaults)
    outcomes["stale"] = len(messages) - outcomes["applied"]
    if succeeded:
        done = _result_rows(succeeded)
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == done.c.id, jobs.c.attempt == done.c.attempt)
            .values(
                status=S.SUCCEEDED.value,
                result=done.c.result,
                worker_id=done.c.worker_id,
                started_at=func.coalesce(jobs.c.started_at, done.c.started_at),
                finished_at=done.c.finished_at,
                lease_expires_at=None,
                deadline_at=None,
                updated_at=func.now(),
            )
        )
        await connection.execute(
            update(job_attempts)
            .where(job_attempts.c.job_id == done.c.id, job_attempts.c.attempt == done.c.attempt)
            .values(
                status="succeeded",
                finished_at=done.c.finished_at,
                error_class=None,
                error=None,
                duration_ms=func.floor(
                    func.extract(
                        "epoch",
                        done.c.finished_at
                        - func.coalesce(job_attempts.c.started_at, done.c.finished_at),
                    )
                    * 1000
                ),
            )
        )
    return outcomes


async def _attempt_failed(
    connection: AsyncConnection,
    changes: Changes,
    job: Any,
    message: JobResult,
    defaults: JobDefaults,
) -> None:
    """An attempt ended without success: cancelled as asked, or failed (retry or dead)."""
    current = S(job.status)
    if message.outcome == "cancelled" and job.cancel_requested_at is not None:
        await finish_attempt(
            connection, job.id, job.attempt, status="cancelled", finished_at=message.finished_at
        )
        await mark_cancelled(
            connection,
            changes,
            job,
            current=current,
            reason=f"cancelled by {job.cancel_requested_by}",
        )
        return
    error = message.error
    await fail_attempt(
        connection,
        changes,
        job,
        kind=error.kind if error else ErrorKind.RETRYABLE,
        error_class=error.error_class if error else "Cancelled",
        error=error.message if error else "the worker stopped the attempt",
        defaults=defaults,
        attempt_status="timed_out" if error and error.kind == ErrorKind.TIMEOUT else "failed",
    )


async def apply_heartbeats(
    connection: AsyncConnection,
    changes: Changes,
    beats: Sequence[WorkerHeartbeat],
    defaults: JobDefaults,
) -> int:
    """Upsert the worker registry, renew the leases of the attempts each worker still holds
    (one statement for the whole batch), and tell a worker to stop an attempt it lost
    (cancelled, re-dispatched, finished). A lease runs from the heartbeat's own send time."""
    latest: dict[str, WorkerHeartbeat] = {}
    for beat in beats:
        if beat.worker_id not in latest or beat.sent_at > latest[beat.worker_id].sent_at:
            latest[beat.worker_id] = beat
    rows = [
        {
            "id": b.worker_id,
            "hostname": b.hostname,
            "pid": b.pid,
            "version": b.version,
            "queues": b.queues,
            "concurrency": b.concurrency,
            "active_jobs": len(b.active),
            "started_at": b.started_at,
            "last_heartbeat_at": _vouched(b.sent_at),
            "stopping": b.stopping,
        }
        for b in sorted(latest.values(), key=lambda b: b.worker_id)
    ]
    statement = insert(workers).values(rows)
    await connection.execute(
        statement.on_conflict_do_update(
            index_elements=[workers.c.id],
            set_={
                **{
                    c: statement.excluded[c]
                    for c in (
                        "hostname",
                        "pid",
                        "version",
                        "queues",
                        "concurrency",
                        "active_jobs",
                        "stopping",
                    )
                },
                # A heartbeat applied late (redelivered) never moves the registry back.
                "last_heartbeat_at": func.greatest(
                    workers.c.last_heartbeat_at, statement.excluded.last_heartbeat_at
                ),
            },
        )
    )
    held = sorted(
        {(a.job_id, a.attempt): beat for beat in latest.values() for a in beat.active}.items(),
        key=lambda item: item[0],
    )
    if not held:
        return 0
    renewals = values(
        column("id", UUID(as_uuid=True)),
        column("attempt", Integer),
        column("worker_id", Text),
        column("sent_at", DateTime(timezone=True)),
        name="renewals",
    ).data([(job_id, attempt, beat.worker_id, beat.sent_at) for (job_id, attempt), beat in held])
    kept = {
        (row.id, row.attempt)
        for row in await connection.execute(
            update(jobs)
            .where(
                jobs.c.id == renewals.c.id,
                jobs.c.attempt == renewals.c.attempt,
                jobs.c.status == S.RUNNING.value,
                jobs.c.worker_id == renewals.c.worker_id,
            )
            .values(
                lease_expires_at=func.greatest(
                    jobs.c.lease_expires_at,
                    _vouched(renewals.c.sent_at) + _seconds(defaults.lease_seconds),
                )
            )
            .returning(jobs.c.id, jobs.c.attempt)
        )
    }
    lost = [(key, beat.worker_id) for key, beat in held if key not in kept]
    if lost:
        await _cancel_lost(connection, changes, lost)
    return len(kept)


async def _cancel_lost(
    connection: AsyncConnection,
    changes: Changes,
    lost: list[tuple[tuple[Any, int], str]],
) -> None:
    """Workers hold attempts the store no longer gives them: stop those they truly lost.

    An attempt still ``queued`` with the same number is not lost: its running message has
    not been applied yet (separate queues).
    """
    rows = await connection.execute(
        select(jobs.c.id, jobs.c.attempt, jobs.c.status).where(
            jobs.c.id.in_({job_id for (job_id, _), _ in lost})
        )
    )
    current = {row.id: row for row in rows}
    for (job_id, attempt), worker_id in lost:
        row = current.get(job_id)
        if row is not None and row.attempt == attempt and row.status == S.QUEUED.value:
            continue
        changes.cancel_attempt(job_id, attempt, "lease lost", worker_id=worker_id)


async def reap_expired(
    connection: AsyncConnection,
    changes: Changes,
    limit: int,
    defaults: JobDefaults,
    horizon: datetime,
) -> tuple[int, int]:
    """Running attempts whose worker went silent (lease) or that ran past their timeout
    (deadline), judged against ``horizon`` (how far every live replica has read the
    heartbeat and result queues), never the wall clock: retry, cancel or dead-letter them.
    Returns (lease expiries, timeouts)."""
    expired = (
        await connection.execute(
            select(
                *JOB_COLUMNS,
                jobs.c.lease_expires_at,
                jobs.c.deadline_at,
                workers.c.last_heartbeat_at,
            )
            .select_from(jobs.outerjoin(workers, workers.c.id == jobs.c.worker_id))
            .where(
                jobs.c.status == S.RUNNING.value,
                or_(jobs.c.lease_expires_at < horizon, jobs.c.deadline_at < horizon),
            )
            .order_by(jobs.c.id)
            .limit(limit)
            .with_for_update(of=jobs, skip_locked=True)
        )
    ).all()
    leases = timeouts = 0
    lease = timedelta(seconds=defaults.lease_seconds)
    for job in expired:
        judged = verdict(
            lease_expires_at=job.lease_expires_at, deadline_at=job.deadline_at, horizon=horizon
        )
        if judged == "timeout":
            timeouts += 1
            changes.cancel_attempt(job.id, job.attempt, "timeout", worker_id=job.worker_id)
            await fail_attempt(
                connection,
                changes,
                job,
                kind=ErrorKind.TIMEOUT,
                error_class="AttemptTimedOut",
                error=f"no result within the job's timeout of {job.timeout_seconds} s",
                defaults=defaults,
                attempt_status="timed_out",
            )
            continue
        leases += 1
        silent = worker_went_silent(
            last_heartbeat_at=job.last_heartbeat_at, horizon=horizon, lease=lease
        )
        if not silent:
            # The worker lives but stopped listing the attempt: stop it there, retry it.
            changes.cancel_attempt(job.id, job.attempt, "lease lost", worker_id=job.worker_id)
        await _lease_lost(connection, changes, job, defaults, silent=silent)
    return leases, timeouts


async def _lease_lost(
    connection: AsyncConnection, changes: Changes, job: Any, defaults: JobDefaults, *, silent: bool
) -> None:
    """Only an attempt whose worker went silent counts toward the poison threshold."""
    lost = job.lost_count + 1 if silent else job.lost_count
    if silent:
        await connection.execute(update(jobs).where(jobs.c.id == job.id).values(lost_count=lost))
    message = (
        f"worker {job.worker_id} went silent"
        if silent
        else f"worker {job.worker_id} stopped renewing the lease"
    )
    if job.cancel_requested_at is None and silent and lost >= defaults.poison_threshold:
        await finish_attempt(
            connection,
            job.id,
            job.attempt,
            status="lost",
            error_class="LeaseExpired",
            error=message,
        )
        changes.move(job.id, job.attempt, S.RUNNING, S.FAILED, "lease expired")
        await mark_dead(
            connection,
            changes,
            job,
            current=S.FAILED,
            reason="poison",
            error=f"{lost} attempts ended without a result (the worker died each time)",
            error_class="PoisonJob",
        )
        return
    await fail_attempt(
        connection,
        changes,
        job,
        kind=ErrorKind.RETRYABLE,
        error_class="LeaseExpired",
        error=message,
        defaults=defaults,
        attempt_status="lost",
        exhausted_reason="lease_expired",
    )
