"""Marking confirmed publishes sent: gathered, then one write per claim token.

Under steady load the relay makes a pass per job or two, and marking each pass's entries
sent at once cost one MongoDB write per pass, as many writes as inserts. The relay instead
queues what the broker confirmed here and marks it at most ``interval`` later (or when
``max_pending`` entries wait), in one ``update_many`` per claim token.

Nothing is lost by waiting: until marked, an entry is still pending under a claim that holds
for the claim lease (far longer than the interval). Should the process die first, the claim
expires and a relay publishes the entry again, which the scheduler's idempotent insert
absorbs: the same path as a crash between publish and mark.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from jobs_submission.adapters import metrics
from jobs_submission.adapters.mongo import Document, SubmissionStore

log = logging.getLogger(__name__)


@dataclass
class SentEntries:
    """Confirmed publishes not yet marked sent, by the claim token they were published under."""

    store: SubmissionStore
    interval: float
    max_pending: int
    monotonic: Callable[[], float] = time.monotonic
    _by_token: dict[str, list[Document]] = field(default_factory=dict)
    _count: int = 0
    _oldest_at: float | None = None

    def add(self, documents: Sequence[Document], *, token: str) -> None:
        if not documents:
            return
        self._by_token.setdefault(token, []).extend(documents)
        self._count += len(documents)
        if self._oldest_at is None:
            self._oldest_at = self.monotonic()

    def __len__(self) -> int:
        return self._count

    def seconds_until_due(self) -> float | None:
        """How long until the oldest entry should be marked (0: now); None when none wait."""
        if self._oldest_at is None:
            return None
        if self._count >= self.max_pending:
            return 0.0
        return max(0.0, self._oldest_at + self.interval - self.monotonic())

    async def mark(self, *, now_ms: int) -> int:
        """Mark every queued entry whose claim its token still holds (one write per token);
        returns how many were marked. Entries whose write fails are dropped: their claims
        expire and they are published again, as after a crash."""
        batches, self._by_token, self._count, self._oldest_at = self._by_token, {}, 0, None
        marked = 0
        for token, documents in batches.items():
            marked += await self._mark(documents, token=token, now_ms=now_ms)
        return marked

    async def _mark(self, documents: list[Document], *, token: str, now_ms: int) -> int:
        marked = await self.store.mark_sent(
            [doc["_id"] for doc in documents], token=token, now_ms=now_ms
        )
        metrics.RELAY_PUBLISHED.inc(marked)
        for doc in documents:
            log.info("job published", extra={"action": "relay_published", "job_id": doc["_id"]})
        if marked < len(documents):
            metrics.RELAY_STALE.inc(len(documents) - marked)
            log.warning(
                "published after the claim expired; another relay may publish again",
                extra={"action": "relay_stale_claim", "count": len(documents) - marked},
            )
        return marked
