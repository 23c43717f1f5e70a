"""How long finished jobs are kept (pure): a retention per terminal status, and which finished
job may go.

A finished job goes with its attempts, events, log lines and resolved dead letters once it has
been finished longer than its status's retention, except while

- its dead letter is unresolved (an operator still has to requeue or discard it);
- another job of its batch is not yet due to go (the batch's view counts all its members;
  the batch goes with its last member);
- one of its dependants is not yet due to go (a child's page names its parents);
- it is its schedule's latest job (the schedule's page links it).

A zero retention keeps that status's jobs forever."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs_common.contracts import JobStatus

S = JobStatus
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Retention:
    succeeded: timedelta = 7 * DAY
    cancelled: timedelta = 7 * DAY
    dead: timedelta = 30 * DAY

    def by_status(self) -> dict[JobStatus, timedelta]:
        """The statuses whose jobs are pruned, and after how long (zero: kept forever)."""
        kept = {S.SUCCEEDED: self.succeeded, S.CANCELLED: self.cancelled, S.DEAD: self.dead}
        return {status: age for status, age in kept.items() if age > timedelta(0)}

    def cutoffs(self, now: datetime) -> dict[JobStatus, datetime]:
        """Per pruned status: a job finished before this moment is due to go."""
        return {status: now - age for status, age in self.by_status().items()}


@dataclass(frozen=True)
class FinishedJob:
    """What decides whether a job may go (the facts the pruner reads from the store)."""

    status: JobStatus
    finished_at: datetime | None
    open_dead_letter: bool = False
    batch_members_due: bool = True  # every other member of its batch is due to go
    dependants_due: bool = True  # every job that depends on it is due to go
    latest_of_schedule: bool = False


def is_due(job: FinishedJob, cutoffs: dict[JobStatus, datetime]) -> bool:
    """Finished longer than its status's retention, and no open dead letter of its own."""
    cutoff = cutoffs.get(job.status)
    return (
        cutoff is not None
        and job.finished_at is not None
        and job.finished_at < cutoff
        and not job.open_dead_letter
    )


def may_go(job: FinishedJob, cutoffs: dict[JobStatus, datetime]) -> bool:
    """Due to go, and nothing that is kept still needs it."""
    return (
        is_due(job, cutoffs)
        and job.batch_members_due
        and job.dependants_due
        and not job.latest_of_schedule
    )
