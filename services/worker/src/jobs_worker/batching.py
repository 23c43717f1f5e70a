"""Publishing results together: while one ``JobResults`` message waits for its confirm, the
results that become ready meanwhile gather for the next one.

No timer and no linger: a result alone goes out at once; under load each confirm's wait
collects the next batch, so the number of publishes per job falls as the load rises. Each
caller learns whether its own result was confirmed (its message's fate).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from jobs_common.contracts import JobResult, JobResults

log = logging.getLogger(__name__)

Send = Callable[[JobResults], Awaitable[None]]


class ResultBatcher:
    def __init__(self, send: Send, *, max_batch: int = 200) -> None:
        self._send = send
        self.max_batch = max_batch
        self._pending: list[tuple[JobResult, asyncio.Future[None]]] = []
        self._sending: asyncio.Task[None] | None = None

    async def publish(self, result: JobResult) -> None:
        """Return once the message carrying ``result`` is confirmed; raise if it was not."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((result, done))
        if self._sending is None or self._sending.done():
            self._sending = asyncio.create_task(self._drain(), name="worker-results")
        await done

    async def _drain(self) -> None:
        while self._pending:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            message = JobResults(
                results=[result for result, _ in batch], trace_id=batch[0][0].trace_id
            )
            try:
                await self._send(message)
            except Exception as exc:  # every result of the message goes unconfirmed
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)

    async def close(self) -> None:
        if self._sending is not None:
            await asyncio.gather(self._sending, return_exceptions=True)
