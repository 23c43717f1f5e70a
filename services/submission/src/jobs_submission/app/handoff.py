"""Handing accepted submissions to this process's relay in memory, already claimed.

A relay pass otherwise costs three MongoDB round trips to find and claim what was just
inserted (a find, an ``update_many``, a find again) before it can publish; on the stand-in
that was most of the time between a 202 and the scheduler recording the job. Instead, a
submission is inserted (a batch's members released) already claimed by the relay's token for
a lease, and the documents go straight to the relay, which publishes them and marks them sent
under that token like any claim.

Nothing is lost if the process dies first: the claim expires after the lease and any relay
claims the entries the ordinary way. A hand-off whose lease ran out before the relay got to it
is skipped for the same reason (another relay may hold it by then), and the queue is bounded:
past ``capacity`` documents are left to the ordinary claim.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Document = dict[str, Any]


@dataclass
class HandOff:
    lease_ms: int
    wake: Callable[[], None]
    capacity: int = 10_000
    token: str = field(default_factory=lambda: f"handoff-{uuid.uuid4().hex}")
    _queue: deque[Document] = field(default_factory=deque)

    def claim(self, now_ms: int) -> tuple[str, int]:
        """``(claimToken, claimedUntilMs)`` for entries accepted now."""
        return self.token, now_ms + self.lease_ms

    def give(self, documents: Sequence[Document]) -> None:
        """Documents inserted (or released) with :meth:`claim`'s fields: publish them soon."""
        room = self.capacity - len(self._queue)
        self._queue.extend(documents[: max(room, 0)])
        self.wake()

    def take(self, limit: int, now_ms: int) -> list[Document]:
        """Up to ``limit`` handed documents whose claim still holds, oldest first."""
        taken: list[Document] = []
        while self._queue and len(taken) < limit:
            document = self._queue.popleft()
            if document["outbox"]["claimedUntilMs"] > now_ms:
                taken.append(document)
        return taken

    def __len__(self) -> int:
        return len(self._queue)
