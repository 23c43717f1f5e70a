"""Publishing results together: while one ``JobResults`` message waits for its confirm, the
results that become ready meanwhile gather for the next one.

No timer and no linger: a result alone goes out at once; under load each confirm's wait
collects the next batch, so the number of publishes per job falls as the load rises. Each
caller learns whether its own result was confirmed (its message's fate).

Log lines still queued for ``jobs.logs`` ride along in the message (``JobResults.lines``):
the scheduler stores them in the transaction that applies the results. Lines of a message
that was not confirmed are dropped and counted, as a failed ``JobLogLines`` publish would be.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from jobs_common.contracts import JobLogLine, JobResult, JobResults

log = logging.getLogger(__name__)

Send = Callable[[JobResults], Awaitable[None]]


class QueuedLines(Protocol):
    """Where log lines wait for their own message
    (:class:`jobs_worker.adapters.job_log_shipper.LogBuffer`)."""

    def take(self, max_size: int) -> list[JobLogLine]: ...

    def drop(self, reason: str, count: int = 1) -> None: ...

    def shipped(self, count: int) -> None: ...


class ResultBatcher:
    def __init__(
        self,
        send: Send,
        *,
        max_batch: int = 200,
        lines: QueuedLines | None = None,
        max_lines: int = 200,
    ) -> None:
        self._send = send
        self.max_batch = max_batch
        self.lines = lines
        self.max_lines = max_lines
        self._pending: list[tuple[JobResult, asyncio.Future[None]]] = []
        self._sending: asyncio.Task[None] | None = None

    async def publish(self, result: JobResult) -> None:
        """Return once the message carrying ``result`` is confirmed; raise if it was not."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((result, done))
        if self._sending is None or self._sending.done():
            # A context of its own: the drain sends other attempts' results too, so its log
            # lines must not carry the log fields bound by this attempt (jobs_common.log_context).
            self._sending = asyncio.create_task(
                self._drain(), name="worker-results", context=contextvars.Context()
            )
        await done

    async def _drain(self) -> None:
        while self._pending:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            lines = self.lines.take(self.max_lines) if self.lines is not None else []
            message = JobResults(
                results=[result for result, _ in batch],
                lines=lines,
                trace_id=batch[0][0].trace_id,
            )
            try:
                await self._send(message)
            except Exception as exc:  # every result of the message goes unconfirmed
                if lines and self.lines is not None:
                    self.lines.drop("publish_failed", len(lines))
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                if lines and self.lines is not None:
                    self.lines.shipped(len(lines))
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)

    async def close(self) -> None:
        if self._sending is not None:
            await asyncio.gather(self._sending, return_exceptions=True)
