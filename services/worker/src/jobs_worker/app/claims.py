"""Claims of redelivered attempts, the worker's side.

A redelivered ready message may be a copy of an attempt that another worker still runs (its
connection was cut, not the worker) or has run (its result not yet confirmed). So before it
runs one, the worker asks the scheduler: a ``JobRunning`` with ``redelivered`` (confirmed) is
the ask, a ``ClaimVerdict`` on the control queue the answer (``run``, ``skip`` or ``wait``).
:class:`ClaimWaiters` matches answers to the deliveries waiting for them.
"""

from __future__ import annotations

import asyncio

from jobs_common.contracts import ClaimVerdict
from jobs_worker.app.active_jobs import JobKey


class ClaimWaiters:
    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self._waiting: dict[JobKey, asyncio.Future[ClaimVerdict]] = {}

    def expect(self, key: JobKey) -> asyncio.Future[ClaimVerdict]:
        """The future the next answer for ``key`` completes (register before asking)."""
        future: asyncio.Future[ClaimVerdict] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        return future

    def forget(self, key: JobKey, future: asyncio.Future[ClaimVerdict]) -> None:
        if self._waiting.get(key) is future:
            del self._waiting[key]

    def deliver(self, verdict: ClaimVerdict) -> bool:
        """Hand an answer to the delivery waiting for it; False when none here waits (an
        answer meant for another worker, or to an ask already given up)."""
        if verdict.worker_id != self.worker_id:
            return False
        future = self._waiting.get((verdict.job_id, verdict.attempt))
        if future is None or future.done():
            return False
        future.set_result(verdict)
        return True
