"""The type registry in MongoDB: ``job_types`` (one document per type: its schemas, queue and
defaults, as last announced) and ``job_type_workers`` (one per worker and type: when that
worker last announced it). Announcements arrive at least once and in any order: a type's
document only moves forward in announcement time, and a worker's rows are replaced by what it
announces now (a ``leaving`` announcement removes them). Times are epoch milliseconds, as in
the rest of this service's documents (compared exactly on every server, the stand-in too)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from jobs_common.contracts import JobTypeInfo, WorkerTypes
from jobs_submission.domain.times import to_ms

TYPES = "job_types"
WORKERS = "job_type_workers"

Document = dict[str, Any]


def type_document(info: JobTypeInfo, at: datetime) -> Document:
    return {
        "payloadSchema": info.payload_schema,
        "resultSchema": info.result_schema,
        "queue": info.queue,
        "timeoutSeconds": info.timeout_seconds,
        "maxAttempts": info.max_attempts,
        "slots": info.slots,
        "updatedAtMs": to_ms(at),
    }


class JobTypeStore:
    def __init__(self, client: AsyncMongoClient[Document], database: str) -> None:
        self.types: AsyncCollection[Document] = client[database][TYPES]
        self.workers: AsyncCollection[Document] = client[database][WORKERS]

    async def ensure_indexes(self) -> None:
        await self.workers.create_index([("workerId", ASCENDING)], name="workers_worker")
        await self.workers.create_index([("seenAtMs", ASCENDING)], name="workers_seen")

    async def record(self, announcement: WorkerTypes) -> None:
        """Apply one worker's announcement (idempotent: a redelivery changes nothing)."""
        worker, at = announcement.worker_id, announcement.sent_at
        at_ms = to_ms(at)
        if announcement.leaving:
            await self.workers.delete_many({"workerId": worker})
            return
        for info in announcement.types:
            await self._upsert_type(info, at)
            await self.workers.update_one(
                {"_id": f"{worker}|{info.job_type}"},
                {"$set": {"type": info.job_type, "workerId": worker, "seenAtMs": at_ms}},
                upsert=True,
            )
        served = [info.job_type for info in announcement.types]
        await self.workers.delete_many({"workerId": worker, "type": {"$nin": served}})

    async def _upsert_type(self, info: JobTypeInfo, at: datetime) -> None:
        """Newer than what is stored, or new: an older announcement (a slow or redelivered
        one) never brings back a schema a newer one replaced."""
        try:
            await self.types.update_one(
                {"_id": info.job_type, "updatedAtMs": {"$lte": to_ms(at)}},
                {"$set": type_document(info, at), "$setOnInsert": {"firstSeenAtMs": to_ms(at)}},
                upsert=True,
            )
        except DuplicateKeyError:
            pass  # the stored document is newer: the filter missed, the insert collided

    async def all_types(self) -> list[Mapping[str, Any]]:
        return [document async for document in self.types.find({})]

    async def live_workers(self, *, seen_since: datetime) -> dict[str, int]:
        """Per type, the workers that announced it since ``seen_since``."""
        counts: dict[str, int] = {}
        since = {"$gte": to_ms(seen_since)}
        async for row in self.workers.find({"seenAtMs": since}, {"type": 1}):
            counts[row["type"]] = counts.get(row["type"], 0) + 1
        return counts


def live_horizon(now: datetime, interval: float) -> datetime:
    """A worker counts as live while its last announcement is younger than three intervals."""
    return now - timedelta(seconds=3 * interval)
