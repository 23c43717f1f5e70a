"""The attempts this worker was told to cancel: a bounded, time-limited memory.

A ``CancelAttempt`` names ``(job_id, attempt)`` or, with ``attempt=None``, every attempt of a
job. The worker remembers it for ``ttl`` seconds (at most ``capacity`` entries, oldest evicted
first) so a delivery of a cancelled attempt that arrives later is refused instead of started.
Pure: the clock is injected.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

CancelKey = tuple[uuid.UUID, int | None]


@dataclass(frozen=True)
class CancelEntry:
    reason: str
    at: float


class CancelledSet:
    def __init__(
        self,
        *,
        capacity: int = 10_000,
        ttl: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.ttl = ttl
        self._clock = clock
        # Insertion order is time order (a re-add moves the key to the end): expiry and
        # eviction both pop from the front.
        self._entries: OrderedDict[CancelKey, CancelEntry] = OrderedDict()

    def __len__(self) -> int:
        self._expire()
        return len(self._entries)

    def add(self, job_id: uuid.UUID, attempt: int | None, reason: str) -> None:
        key = (job_id, attempt)
        self._entries.pop(key, None)
        self._entries[key] = CancelEntry(reason=reason, at=self._clock())
        self._expire()
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def reason_for(self, job_id: uuid.UUID, attempt: int) -> str | None:
        """The reason ``(job_id, attempt)`` is cancelled (its own entry, else the job's
        any-attempt entry), or None."""
        self._expire()
        for key in ((job_id, attempt), (job_id, None)):
            entry = self._entries.get(key)
            if entry is not None:
                return entry.reason
        return None

    def _expire(self) -> None:
        horizon = self._clock() - self.ttl
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.at > horizon:
                return
            del self._entries[key]
