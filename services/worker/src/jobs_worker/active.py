"""The jobs running on this worker, keyed by ``(job_id, attempt)``.

This registry is the seam for what runs alongside a job: a heartbeat loop renews the lease
of every :meth:`ActiveJobs.snapshot` entry, a ``jobs.cancel`` consumer calls
:meth:`ActiveJobs.cancel`, and a worker registry reports :meth:`ActiveJobs.keys`.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from jobs_common.contracts import JobDispatch

JobKey = tuple[uuid.UUID, int]


@dataclass(eq=False)
class ActiveJob:
    dispatch: JobDispatch
    queue: str
    task: asyncio.Task[None]
    started_at: datetime | None = None
    result_confirmed: bool = False
    cancel_reason: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def key(self) -> JobKey:
        return (self.dispatch.job_id, self.dispatch.attempt)


class ActiveJobs:
    def __init__(self) -> None:
        self._jobs: dict[JobKey, ActiveJob] = {}

    def __len__(self) -> int:
        return len(self._jobs)

    def get(self, key: JobKey) -> ActiveJob | None:
        return self._jobs.get(key)

    def add(self, job: ActiveJob) -> None:
        self._jobs[job.key] = job

    def remove(self, job: ActiveJob) -> None:
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]

    def keys(self) -> list[JobKey]:
        return list(self._jobs)

    def snapshot(self) -> list[ActiveJob]:
        return list(self._jobs.values())

    def cancel(self, key: JobKey, *, reason: str) -> bool:
        """Cancel the task running ``key``; False when it does not run here."""
        job = self._jobs.get(key)
        if job is None or job.task.done():
            return False
        job.cancel_reason = reason
        job.task.cancel()
        return True
