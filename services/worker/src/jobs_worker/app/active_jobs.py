"""The jobs running on this worker, keyed by ``(job_id, attempt)``.

The heartbeat loop reports :meth:`ActiveJobs.leased` (the attempts that run here or whose
result is not confirmed yet), and the control consumer calls
:meth:`ActiveJobs.cancel_matching` for a ``CancelAttempt``.

Each job moves through three phases: ``starting`` (publishing ``JobRunning``), ``running``
(the handler runs in its own task, :attr:`ActiveJob.handler`) and ``reporting`` (the outcome
is decided, ``JobResult`` is being published). A cancel request records its reason in every
phase but ``reporting`` and cancels the handler task if one runs; the executor turns that
into a ``cancelled`` outcome. Shutdown cancels the delivery task itself instead (abandon).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from jobs_common.contracts import JobDispatch
from jobs_sdk.context import CancelSignal

JobKey = tuple[uuid.UUID, int]


class Phase(StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    REPORTING = "reporting"


@dataclass(eq=False)
class ActiveJob:
    dispatch: JobDispatch
    queue: str
    task: asyncio.Task[None]
    phase: Phase = Phase.STARTING
    handler: asyncio.Task[Any] | None = None
    started_at: datetime | None = None
    running_confirmed: bool = False
    result_confirmed: bool = False
    cancel_reason: str | None = None
    cancel_signal: CancelSignal = field(default_factory=CancelSignal)  # the handler's view
    progress: tuple[float, str | None] | None = None  # the latest ctx.progress
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def key(self) -> JobKey:
        return (self.dispatch.job_id, self.dispatch.attempt)


class ActiveJobs:
    def __init__(self, *, reported_capacity: int = 10_000) -> None:
        self._jobs: dict[JobKey, ActiveJob] = {}
        # Attempts whose result the broker confirmed, most recent last: a redelivery of one
        # (its ack was lost with the connection) is acked without running the handler again.
        self._reported: OrderedDict[JobKey, None] = OrderedDict()
        self.reported_capacity = reported_capacity

    def __len__(self) -> int:
        return len(self._jobs)

    def get(self, key: JobKey) -> ActiveJob | None:
        return self._jobs.get(key)

    def add(self, job: ActiveJob) -> None:
        self._jobs[job.key] = job

    def remove(self, job: ActiveJob) -> None:
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]
        if job.result_confirmed:
            self._reported[job.key] = None
            self._reported.move_to_end(job.key)
            while len(self._reported) > self.reported_capacity:
                self._reported.popitem(last=False)

    def reported(self, key: JobKey) -> bool:
        """This worker ran ``key`` and the broker confirmed its result (recently)."""
        return key in self._reported

    def keys(self) -> list[JobKey]:
        return list(self._jobs)

    def snapshot(self) -> list[ActiveJob]:
        return list(self._jobs.values())

    def leased(self) -> list[tuple[uuid.UUID, int, datetime | None]]:
        """Attempts that run here or whose result waits for its confirm, with their start
        times: announced or not (a quick attempt sends no ``JobRunning``), the heartbeat lists
        them all, which renews their leases, starts the unannounced ones in the record, and so
        keeps a claim of a redelivered copy waiting (``app/claims.py``)."""
        return [
            (*key, job.started_at)
            for key, job in self._jobs.items()
            if job.started_at is not None
            and job.phase is not Phase.STARTING
            and not job.result_confirmed
        ]

    def cancel(self, key: JobKey, *, reason: str) -> bool:
        """Ask the attempt ``key`` to stop with a ``cancelled`` outcome; False when it does
        not run here or its outcome is already decided."""
        job = self._jobs.get(key)
        if job is None or job.task.done() or job.phase is Phase.REPORTING:
            return False
        if job.cancel_reason is None:
            job.cancel_reason = reason
        job.cancel_signal.set()
        if job.handler is not None and not job.handler.done():
            job.handler.cancel()
        return True

    def cancel_matching(
        self, job_id: uuid.UUID, attempt: int | None, *, reason: str
    ) -> list[JobKey]:
        """Cancel ``(job_id, attempt)``, or every attempt of the job here when ``attempt`` is
        None; the keys actually cancelled."""
        keys = [
            key for key in self._jobs if key[0] == job_id and (attempt is None or key[1] == attempt)
        ]
        return [key for key in keys if self.cancel(key, reason=reason)]
