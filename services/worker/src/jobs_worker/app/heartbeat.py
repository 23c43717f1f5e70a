"""The heartbeat: one ``WorkerHeartbeat`` every ``heartbeat_interval`` seconds on
``jobs.heartbeat``, listing the attempts this worker runs (the scheduler renews their leases)
and describing the worker for the registry: whether it is quiet (an admin's ``WorkerControl``)
and how many attempts it ran and how many of them failed (``domain/tally.py``). One at start,
one at once when it goes quiet or a drain begins (``stopping``), one last with ``stopping``
and nothing active when the worker stops.

A heartbeat that is not confirmed is logged and counted, never fatal: the next one follows an
interval later, and leases last several intervals.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from jobs_common.contracts import ActiveAttempt, WorkerHeartbeat, utcnow
from jobs_common.rabbit import Publisher
from jobs_common.topology import HEARTBEAT
from jobs_worker.adapters import metrics
from jobs_worker.app.active_jobs import ActiveJobs, JobKey
from jobs_worker.domain.tally import Tally

log = logging.getLogger(__name__)


def package_version() -> str:
    try:
        return version("jobs-worker")
    except PackageNotFoundError:
        return "0.0.0"


@dataclass(frozen=True)
class WorkerIdentity:
    worker_id: str
    queues: list[str]
    concurrency: int
    started_at: datetime
    hostname: str
    pid: int
    version: str
    types: list[str] = field(default_factory=list)  # the job types this worker serves

    @classmethod
    def of_this_process(
        cls,
        *,
        worker_id: str,
        queues: list[str],
        concurrency: int,
        types: Sequence[str] = (),
    ) -> WorkerIdentity:
        return cls(
            worker_id=worker_id,
            queues=queues,
            types=list(types),
            concurrency=concurrency,
            started_at=utcnow(),
            hostname=socket.gethostname(),
            pid=os.getpid(),
            version=package_version(),
        )


def progress_of(active: ActiveJobs, key: JobKey) -> dict[str, Any]:
    """The attempt's latest ``ctx.progress``, as heartbeat fields (none reported: none)."""
    job = active.get(key)
    if job is None or job.progress is None:
        return {}
    percent, message = job.progress
    return {"progress": percent, "progress_message": message[:500] if message else None}


def build_heartbeat(
    identity: WorkerIdentity,
    active: ActiveJobs,
    *,
    stopping: bool,
    final: bool = False,
    quiet: bool = False,
    tally: Tally | None = None,
) -> WorkerHeartbeat:
    attempts = [] if final else sorted(active.leased(), key=lambda job: (str(job[0]), job[1]))
    return WorkerHeartbeat(
        worker_id=identity.worker_id,
        hostname=identity.hostname,
        pid=identity.pid,
        version=identity.version,
        queues=identity.queues,
        types=identity.types,
        concurrency=identity.concurrency,
        active=[
            ActiveAttempt(
                job_id=job_id,
                attempt=attempt,
                started_at=started_at,
                **progress_of(active, (job_id, attempt)),
            )
            for job_id, attempt, started_at in attempts
        ],
        started_at=identity.started_at,
        sent_at=utcnow(),
        stopping=stopping or final,
        quiet=quiet,
        processed=tally.processed if tally is not None else 0,
        failed=tally.failed if tally is not None else 0,
    )


class HeartbeatLoop:
    def __init__(
        self,
        *,
        publisher: Publisher,
        identity: WorkerIdentity,
        active: ActiveJobs,
        interval: float,
        stopping: Callable[[], bool],
        quiet: Callable[[], bool] = lambda: False,
        tally: Tally | None = None,
    ) -> None:
        self.publisher = publisher
        self.identity = identity
        self.active = active
        self.interval = interval
        self.publish_timeout = max(5.0, interval)
        self._stopping = stopping
        self._quiet = quiet
        self.tally = tally
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def send(self, *, final: bool = False) -> bool:
        """Publish one heartbeat now; False (logged, counted) when it was not confirmed."""
        heartbeat = build_heartbeat(
            self.identity,
            self.active,
            stopping=self._stopping(),
            final=final,
            quiet=self._quiet(),
            tally=self.tally,
        )
        try:
            async with asyncio.timeout(self.publish_timeout):
                await self.publisher.publish(HEARTBEAT, heartbeat)
        except Exception:  # TimeoutError included; CancelledError is not an Exception
            metrics.HEARTBEATS.labels("failed").inc()
            log.warning(
                "heartbeat not confirmed",
                extra={
                    "action": "heartbeat_failed",
                    "worker_id": self.identity.worker_id,
                    "active": len(heartbeat.active),
                },
                exc_info=True,
            )
            return False
        metrics.HEARTBEATS.labels("sent").inc()
        return True

    async def start(self) -> None:
        await self.send()
        self._task = asyncio.create_task(self._run(), name="heartbeat")

    def poke(self) -> None:
        """Send the next heartbeat now (the worker went quiet or began to drain)."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop the loop and send the last heartbeat: stopping, nothing active."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self.send(final=True)

    async def _run(self) -> None:
        # Each heartbeat is due an interval after the previous one began, not after its confirm
        # came back: the lease runs from the send time, so a broker slow to confirm (a flood)
        # must not stretch the gap between two heartbeats past the lease.
        loop = asyncio.get_running_loop()
        due = loop.time() + self.interval
        while True:
            try:
                async with asyncio.timeout_at(due):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            due = loop.time() + self.interval
            await self.send()
