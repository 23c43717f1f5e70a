"""The worker's concurrency slots: a job of a heavy type (``@handler(slots=n)``) holds n of
them while it runs, so fewer of it run at once. First come, first served: a heavy job waiting
for its slots is not overtaken by light ones forever."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SlotPool:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a slot pool holds at least one slot")
        self.capacity = capacity
        self.free = capacity
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    @asynccontextmanager
    async def hold(self, slots: int) -> AsyncIterator[None]:
        """Hold ``slots`` (at most the whole pool) until the block ends."""
        wanted = max(1, min(slots, self.capacity))
        if self.free >= wanted and not self._waiters:
            self.free -= wanted
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((wanted, granted))
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._release(wanted)  # granted just as it was cancelled
                else:
                    self._waiters.remove((wanted, granted))
                    self._wake()
                raise
        try:
            yield
        finally:
            self._release(wanted)

    def _release(self, slots: int) -> None:
        self.free += slots
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._waiters[0][0] <= self.free:
            wanted, granted = self._waiters.popleft()
            if granted.done():
                continue
            self.free -= wanted
            granted.set_result(None)
