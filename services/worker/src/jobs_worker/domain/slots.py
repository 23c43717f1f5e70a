"""The worker's concurrency slots: a job of a heavy type (``@handler(slots=n)``) holds n of
them while it runs, so fewer of it run at once. First come, first served: a heavy job waiting
for its slots is not overtaken by light ones forever."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


class SlotPool:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a slot pool holds at least one slot")
        self.capacity = capacity
        self.free = capacity
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    @asynccontextmanager
    async def hold(self, slots: int, *, unless: asyncio.Event | None = None) -> AsyncIterator[bool]:
        """Hold ``slots`` (at most the whole pool) until the block ends: True. Should
        ``unless`` be set while it waits, it gives up its place in line: False, nothing held
        (the worker went quiet: a job that has not started goes back to its queue)."""
        wanted = max(1, min(slots, self.capacity))
        if self.free >= wanted and not self._waiters:
            self.free -= wanted
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((wanted, granted))
            try:
                await self._wait(granted, unless)
            except asyncio.CancelledError:
                self._withdraw(wanted, granted)
                raise
            if not granted.done():
                self._withdraw(wanted, granted)
                yield False
                return
        try:
            yield True
        finally:
            self._release(wanted)

    @staticmethod
    async def _wait(granted: asyncio.Future[None], unless: asyncio.Event | None) -> None:
        if unless is None:
            await granted
            return
        given_up: asyncio.Future[Any] = asyncio.ensure_future(unless.wait())
        waited: set[asyncio.Future[Any]] = {granted, given_up}
        try:
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        finally:
            given_up.cancel()

    def _withdraw(self, wanted: int, granted: asyncio.Future[None]) -> None:
        """Leave the line; slots granted just as the waiter left are given back."""
        if granted.done() and not granted.cancelled():
            self._release(wanted)
        else:
            granted.cancel()
            self._waiters.remove((wanted, granted))
            self._wake()

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
