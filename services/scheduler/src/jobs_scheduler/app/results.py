"""Attempts that ended on a worker (``jobs.results``): successes set-based, failures and
cancellations through the failure policy; an attempt handed back unrun (``unserved``: the
worker does not serve the type) goes to the type's lane (``app/waiting.py``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ErrorKind, JobResult, JobStatus
from jobs_scheduler.adapters import attempts, job_writes, jobs
from jobs_scheduler.adapters.set_based import json_text
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, apply_transitions
from jobs_scheduler.app.failures import fail_attempt, mark_cancelled
from jobs_scheduler.app.waiting import hand_back
from jobs_scheduler.domain.defaults import JobDefaults
from jobs_scheduler.domain.failures import stopped_attempt

S = JobStatus


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
    locked = await jobs.lock_reported(connection, reported)
    succeeded: list[Transition] = []
    done: list[JobResult] = []
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
        if report.outcome == "unserved":  # nothing ran: a worker without the type's handler
            if current is S.QUEUED and await hand_back(connection, changes, job, report):
                outcomes["handed_back"] += 1
            continue
        outcomes["applied"] += 1
        if current is S.QUEUED:  # its JobRunning did not come first: the result says it started
            changes.attempt_started(
                job_type=job.type,
                priority=job.priority,
                queued_at=job.queued_at,
                started_at=report.started_at,
            )
        changes.attempt_ran(
            job_type=job.type,
            started_at=report.started_at,
            finished_at=report.finished_at,
            project_id=job.project_id,
        )
        if report.outcome == "succeeded":
            succeeded.append(_success(report, current))
            done.append(report)
        else:
            await _attempt_failed(connection, changes, job, report, defaults)
    outcomes["stale"] = len(messages) - outcomes["applied"] - outcomes["handed_back"]
    if succeeded:
        await apply_transitions(
            connection, changes, succeeded, job_writes.SUCCEED, locked=True
        )  # lock_reported locked them, in id order
        await attempts.succeed(connection, done)
    return outcomes


def _success(report: JobResult, current: JobStatus) -> Transition:
    """``-> succeeded``; from ``queued`` (an attempt too quick to send JobRunning, or whose
    JobRunning is still on its way) the timeline shows where it started, too."""
    started = f"started on {report.worker_id}"
    return Transition(
        report.job_id,
        current,
        S.SUCCEEDED,
        "succeeded",
        via=((S.RUNNING, started),) if current is S.QUEUED else (),
        attempt=report.attempt,
        values={
            "result": json_text(report.result or {}),
            "worker_id": report.worker_id,
            "started_at": report.started_at,
            "finished_at": report.finished_at,
        },
    )


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
        await attempts.finish(
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
    if message.outcome == "cancelled":
        # No one asked: the platform stopped the attempt (a lease judged lost, a worker told
        # to let go). Never the handler's permanent error: a lost attempt, retried within the
        # job's attempts (domain/failures.py, stopped_attempt).
        stopped = stopped_attempt(error.message if error else None)
        await fail_attempt(
            connection,
            changes,
            job,
            kind=stopped.kind,
            error_class=stopped.error_class,
            error=stopped.error,
            defaults=defaults,
            attempt_status="lost",
            lease_lost=True,
            report=message,
        )
        return
    await fail_attempt(
        connection,
        changes,
        job,
        kind=error.kind if error else ErrorKind.RETRYABLE,
        error_class=error.error_class if error else "AttemptFailed",
        error=error.message if error else "the worker reported no error",
        defaults=defaults,
        attempt_status="timed_out" if error and error.kind == ErrorKind.TIMEOUT else "failed",
        retry_after_seconds=error.retry_after_seconds if error else None,
        report=message,
    )
