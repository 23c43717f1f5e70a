"""The bounded ready window (docs/flow-control.md, "Fair dispatch"): the relay keeps at most
``size`` ready messages in each ready queue of the broker, enough to keep every worker busy
between two passes; the rest of the queue's dispatches wait in the outbox, their jobs
``queued``, where pause, limits and fair dispatch still act on them.

The room left in a queue is its depth as the broker last said (a passive declare,
``adapters/queue_depths.py``) less the messages this replica sent since. A reading may be
half a second old while the room plainly suffices; it is read again when it does not, and at
every pass for a queue the window held back. Replicas do not see each other's sends: with
``n`` relays a queue may briefly hold up to ``n`` windows."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping

from jobs_scheduler.adapters import metrics
from jobs_scheduler.adapters.queue_depths import QueueDepths


class ReadyWindow:
    def __init__(self, depths: QueueDepths, *, size: int) -> None:
        self.depths = depths
        self.size = size
        self._sent: dict[str, list[tuple[float, int]]] = {}  # queue -> [(sent at, count)]
        self._held: set[str] = set()  # queues whose dispatches the window held back last

    @property
    def holding(self) -> bool:
        """Whether the last pass left dispatches in the outbox for want of room."""
        return bool(self._held)

    async def full(self) -> list[str]:
        """The queues that held dispatches back and have no room yet, read afresh: a pass
        leaves their dispatches unlocked and reaches the rows behind them."""
        full = [queue for queue in sorted(self._held) if await self.room(queue, fresh=True) <= 0]
        for queue in self._held:
            metrics.READY_WINDOW_FULL.labels(queue).set(1 if queue in full else 0)
        return full

    async def room(self, queue: str, wanted: int = 0, *, fresh: bool = False) -> int:
        """How many more ready messages ``queue`` may take now; read afresh when the last
        reading leaves less than ``wanted``. A queue whose depth is unknown (not declared yet,
        the broker silent) has the whole window: a publish to it fails on its own."""
        reading = await self.depths.reading(queue, max_age=0.0 if fresh else None)
        room = self._room(queue, reading)
        if room < wanted and not fresh:
            room = self._room(queue, await self.depths.reading(queue, max_age=0.0))
        return room

    def _room(self, queue: str, reading: tuple[float, int] | None) -> int:
        if reading is None:
            return self.size
        read_at, depth = reading
        sent = self._sent.get(queue, [])
        self._sent[queue] = kept = [entry for entry in sent if entry[0] >= read_at]
        return max(0, self.size - depth - sum(count for _, count in kept))

    def held(self, queue: str, holding: bool) -> None:
        """Whether this pass left dispatches of ``queue`` in the outbox for want of room."""
        if holding:
            self._held.add(queue)
        elif queue in self._held:
            self._held.discard(queue)
            metrics.READY_WINDOW_FULL.labels(queue).set(0)

    def sent(self, counts: Mapping[str, int] | Counter[str]) -> None:
        now = time.monotonic()
        for queue, count in counts.items():
            if count:
                self._sent.setdefault(queue, []).append((now, count))
