"""Expiry where the MongoDB server has no TTL monitor (the nx-27017 stand-in, which instead
scans a TTL-indexed collection before every read of it): as the service starts and then every
minute, as MongoDB's monitor would, the submissions published and the batches accepted longer
ago than the retention are deleted (``adapters/mongo.py``, ``adapters/batches.py``). On
MongoDB the TTL indexes do it."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.mongo import SubmissionStore

log = logging.getLogger(__name__)

INTERVAL_SECONDS = 60.0  # MongoDB's TTL monitor's pace


class Expiry:
    """Deletes what the TTL indexes would have expired (``run_once``, every INTERVAL_SECONDS
    through ``jobs_common.periodic``, as the service starts it)."""

    def __init__(self, store: SubmissionStore, batches: BatchStore, retention: timedelta) -> None:
        self.store = store
        self.batches = batches
        self.retention = retention

    async def run_once(self, now_ms: int | None = None) -> int:
        """Delete what has expired by ``now_ms`` (default: now); returns how many."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        cutoff = now - int(self.retention.total_seconds() * 1000)
        deleted = await self.store.delete_published_before(cutoff)
        deleted += await self.batches.delete_accepted_before(cutoff)
        if deleted:
            log.info("expired", extra={"action": "expire", "count": deleted})
        return deleted
