"""Shipping handler log lines to ``jobs.logs`` without ever blocking the handler.

A handler's ``ctx.logger`` calls a forwarder (:meth:`JobLogShipper.forwarder`) for each line.
The line becomes a :class:`JobLogLine` at once (its ``at`` is the moment it was logged) and goes
into a bounded queue: directly on the event loop's thread, through
``loop.call_soon_threadsafe`` from any other thread (handlers that run in
``asyncio.to_thread``). One task drains the queue: it waits ``linger`` seconds after
the first line for others to join it, then publishes what it holds as one confirmed
:class:`JobLogLines` message. A results message leaving meanwhile takes the queued lines
along (:meth:`LogBuffer.take`), so a short job's lines cost no message of their own. A
full queue, a stopped shipper or a failed publish drops lines and counts them
(``worker_job_log_lines_dropped_total{reason}``): job logs are diagnostics, never worth
delaying or failing a job for.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Literal

from jobs_common.contracts import JobDispatch, JobLogLine, JobLogLines, utcnow
from jobs_common.rabbit import Publisher
from jobs_common.topology import LOGS
from jobs_sdk.context import LogForward
from jobs_worker.adapters import metrics

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 8_000
_TRUNCATED = " ...[truncated]"

LogLevel = Literal["debug", "info", "warning", "error"]
LEVELS: dict[LogLevel, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def level_name(levelno: int) -> LogLevel:
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


def truncate(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - len(_TRUNCATED)] + _TRUNCATED


class LogBuffer:
    """A bounded queue of lines that any thread may put into; only the loop takes out."""

    def __init__(self, capacity: int) -> None:
        self._queue: asyncio.Queue[JobLogLine] = asyncio.Queue(maxsize=capacity)
        self._arrived = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._closed = False
        self._dropped_lock = threading.Lock()
        self.dropped = 0

    def open(self) -> None:
        """Bind to the running loop; lines put before are dropped."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._closed = False

    def close(self) -> None:
        """Accept no more lines (those queued stay for the last flush)."""
        self._closed = True

    def __len__(self) -> int:
        return self._queue.qsize()

    def put(self, line: JobLogLine) -> None:
        """Hand ``line`` to the loop; never blocks, never raises. Thread-safe."""
        loop = self._loop
        if loop is None or self._closed:
            self.drop("stopped")
        elif threading.get_ident() == self._loop_thread:
            self._enqueue(line)
        else:
            try:
                loop.call_soon_threadsafe(self._enqueue, line)
            except RuntimeError:  # the loop is closed: the worker is gone
                self.drop("stopped")

    def _enqueue(self, line: JobLogLine) -> None:
        if self._closed:
            self.drop("stopped")
            return
        try:
            self._queue.put_nowait(line)
        except asyncio.QueueFull:
            self.drop("queue_full")
            return
        self._arrived.set()

    def drop(self, reason: str, count: int = 1) -> None:
        with self._dropped_lock:
            self.dropped += count
        metrics.LOG_LINES_DROPPED.labels(reason).inc(count)

    async def get_batch(self, max_size: int, linger: float = 0.0) -> list[JobLogLine]:
        """Wait until a line is queued, give others ``linger`` seconds to join it (unless
        ``max_size`` are queued already), then take whatever is still queued, up to
        ``max_size``. That may be nothing: a results message that went out meanwhile took
        the lines along (:meth:`take`), which spares them a message of their own."""
        while self._queue.empty():
            self._arrived.clear()
            await self._arrived.wait()
        if linger > 0 and self._queue.qsize() < max_size:
            await asyncio.sleep(linger)
        batch: list[JobLogLine] = []
        while len(batch) < max_size and not self._queue.empty():
            batch.append(self._queue.get_nowait())
        return batch

    def take(self, max_size: int) -> list[JobLogLine]:
        """Take up to ``max_size`` queued lines at once, without waiting (lines riding
        along with a results message)."""
        lines: list[JobLogLine] = []
        while len(lines) < max_size and not self._queue.empty():
            lines.append(self._queue.get_nowait())
            self._queue.task_done()
        return lines

    def shipped(self, count: int) -> None:
        """``count`` taken lines were confirmed by the broker (in a results message)."""
        metrics.LOG_LINES_PUBLISHED.inc(count)

    def done(self, count: int) -> None:
        for _ in range(count):
            self._queue.task_done()

    async def join(self) -> None:
        await self._queue.join()

    def discard(self) -> int:
        """Drop what is still queued (after the last flush timed out); how many."""
        count = len(self.take(len(self)))
        if count:
            self.drop("stopped", count)
        return count


def line_forwarder(buffer: LogBuffer, *, worker_id: str, dispatch: JobDispatch) -> LogForward:
    """Turn each ``(levelno, text)`` of one attempt into a ``JobLogLine`` in ``buffer``."""

    def forward(levelno: int, text: str) -> None:
        buffer.put(
            JobLogLine(
                job_id=dispatch.job_id,
                attempt=dispatch.attempt,
                worker_id=worker_id,
                level=level_name(levelno),
                message=truncate(text),
                at=utcnow(),
                trace_id=dispatch.trace_id,
            )
        )

    return forward


class JobLogShipper:
    def __init__(
        self,
        *,
        publisher: Publisher,
        worker_id: str,
        capacity: int = 10_000,
        batch_size: int = 200,
        linger: float = 0.05,
        publish_timeout: float = 10.0,
    ) -> None:
        self.publisher = publisher
        self.worker_id = worker_id
        self.batch_size = batch_size
        self.linger = linger
        self.publish_timeout = publish_timeout
        self.buffer = LogBuffer(capacity)
        self._task: asyncio.Task[None] | None = None

    def forwarder(self, dispatch: JobDispatch) -> LogForward:
        """The ``forward`` callable of one attempt's ``JobLogger`` (any thread)."""
        return line_forwarder(self.buffer, worker_id=self.worker_id, dispatch=dispatch)

    async def start(self) -> None:
        self.buffer.open()
        self._task = asyncio.create_task(self._run(), name="job-logs")

    async def stop(self, *, flush_timeout: float) -> None:
        """Stop accepting lines, publish what is queued (up to ``flush_timeout``), stop."""
        self.buffer.close()
        if self._task is None:
            return
        try:
            async with asyncio.timeout(flush_timeout):
                await self.buffer.join()
        except TimeoutError:
            log.warning(
                "job log lines not flushed at shutdown",
                extra={"action": "job_logs_unflushed", "count": len(self.buffer)},
            )
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._task = None
        self.buffer.discard()

    async def _run(self) -> None:
        while True:
            batch = await self.buffer.get_batch(self.batch_size, self.linger)
            if not batch:
                continue  # they rode along with results
            try:
                await self._publish(batch)
            finally:
                self.buffer.done(len(batch))

    async def _publish(self, batch: list[JobLogLine]) -> None:
        message = JobLogLines(worker_id=self.worker_id, lines=batch)
        try:
            async with asyncio.timeout(self.publish_timeout):
                await self.publisher.publish(LOGS, message)
        except Exception as exc:  # a timeout, a refused publish, a closed channel
            self.buffer.drop("publish_failed", len(batch))
            log.warning(
                "job log lines not published; dropped",
                extra={"action": "job_logs_dropped", "count": len(batch), "error": repr(exc)},
            )
            return
        metrics.LOG_LINES_PUBLISHED.inc(len(batch))
