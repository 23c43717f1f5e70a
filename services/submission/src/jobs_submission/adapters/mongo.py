"""The ``submissions`` collection: inserts, idempotency look-ups and the outbox claim protocol."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pymongo import ASCENDING, AsyncMongoClient
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

from jobs_submission.domain.documents import (
    BATCH_ACCEPTED,
    OUTBOX_HELD,
    OUTBOX_PENDING,
    OUTBOX_SENT,
    STATUS_PUBLISHED,
)
from jobs_submission.domain.idempotency import PROJECT_FIELD, PROJECT_INDEX, holders
from jobs_submission.domain.projects import project_of
from jobs_submission.domain.times import from_ms

log = logging.getLogger(__name__)

COLLECTION = "submissions"
BATCHES = "batches"
IDEMPOTENCY_INDEX = "submittedBy_idempotencyKey_unique"
# The relay's claim: equality on the state, then range and sort on the due time.
OUTBOX_INDEX = "outbox_state_nextAttemptAtMs"
# The outbox gauges: pending entries by acceptance time. Partial, so on MongoDB it holds only
# the pending entries (the backlog), not every job ever accepted.
PENDING_AGE_INDEX = "outbox_state_createdAtMs_pending"
BATCH_MEMBER_INDEX = "batchId"
# Retention: a submission goes this long after its publish was confirmed (the scheduler has
# recorded the job by then); a pending one never (docs/operations.md, "Retention").
RETENTION_INDEX = "publishedAt_ttl"
LOOKUP_CHUNK = 5_000


# What the nx-27017 stand-in answers in buildInfo's ``process``. It has no TTL monitor: it
# looks for expired documents in a collection with a TTL index before every read of it (a
# full scan: 0.7 of a core with 200,000 submissions), so there the service expires them
# itself, once a minute (app/expiry.py), and builds no TTL index.
STAND_IN_PROCESS = "nx_27017"


async def has_ttl_monitor(db: AsyncDatabase[Document]) -> bool:
    """Whether the server deletes a TTL index's expired documents in the background."""
    info = await db.command("buildInfo")
    return info.get("process") != STAND_IN_PROCESS


async def ttl_index(collection: AsyncCollection[Document], field: str) -> tuple[str, int] | None:
    """The TTL index on ``field`` (its name and seconds), found by its key: a server may name
    it its own way."""
    for name, index in (await collection.index_information()).items():
        if index.get("key") == [(field, 1)] and "expireAfterSeconds" in index:
            return name, int(index["expireAfterSeconds"])
    return None


async def ensure_ttl(
    db: AsyncDatabase[Document],
    collection: str,
    field: str,
    name: str,
    retention: timedelta | None,
) -> None:
    """Documents of ``collection`` go ``retention`` after their ``field`` date (None or zero:
    kept): the TTL index built, changed in place where the server can, or dropped."""
    seconds = None if not retention else max(1, int(retention.total_seconds()))
    current = await ttl_index(db[collection], field)
    if (current[1] if current else None) == seconds:
        return
    log.info(
        "retention set",
        extra={
            "action": "retention_index",
            "collection": collection,
            "expire_after_seconds": seconds,
            "was": current[1] if current else None,
        },
    )
    if current is not None and seconds is not None:  # in place, where the server can
        index = {"name": current[0], "expireAfterSeconds": seconds}
        await db.command("collMod", collection, index=index)
        if await ttl_index(db[collection], field) == (current[0], seconds):
            return
    if current is not None:
        await db[collection].drop_index(current[0])
    if seconds is not None:
        await db[collection].create_index(
            [(field, ASCENDING)], name=name, expireAfterSeconds=seconds
        )


Document = dict[str, Any]


# The claim fields of an entry no relay holds.
UNCLAIMED: dict[str, object] = {"outbox.claimToken": None, "outbox.claimedUntilMs": 0}


def claimed_by(job_ids: Sequence[str], token: str) -> dict[str, object]:
    """The pending entries among ``job_ids`` that ``token`` still claims: every write a relay
    makes under its claim is fenced by it."""
    return {
        "_id": {"$in": list(job_ids)},
        "outbox.state": OUTBOX_PENDING,
        "outbox.claimToken": token,
    }


def eq(value: object) -> dict[str, object]:
    """``{"$eq": value}`` for an equality that is to drive an index lookup.

    For MongoDB it is the very same predicate as a bare ``value`` (same matches, same index
    use). The nx-27017 stand-in compiles only this form to an index lookup: it turns a bare
    equality into "equal or an array containing it", which its expression indexes cannot serve
    (always in updates, deletes and counts; in finds unless the index name ends with the field).
    """
    return {"$eq": value}


async def key_holder(
    collection: AsyncCollection[Document], owner: str, project: str, key: str
) -> Document | None:
    """The document of ``collection`` holding Idempotency-Key ``key`` in ``project``."""
    for holder in holders(key, owner=owner, project=project):
        if (found := await collection.find_one(holder)) is not None:
            return found
    return None


@dataclass(frozen=True)
class PendingBacklog:
    """What one bounded scan of :data:`PENDING_AGE_INDEX` saw of the pending entries."""

    count: int  # exact below the scan's limit; equal to the limit: at least that many
    oldest_created_ms: int | None  # acceptance time of the oldest pending entry, if any


class SubmissionStore:
    """All MongoDB access of the service. Claims are fenced by a claim token."""

    def __init__(self, client: AsyncMongoClient[Document], database: str) -> None:
        self.client = client
        self.db: AsyncDatabase[Document] = client[database]
        self.collection: AsyncCollection[Document] = self.db[COLLECTION]

    async def ensure_indexes(
        self, retention: timedelta | None = None, *, ttl_monitor: bool = True
    ) -> None:
        """The indexes the queries here use, and the retention's TTL index: ``retention``
        after ``publishedAt`` (None or zero: submissions are kept; no TTL monitor: none, the
        service expires them, :meth:`delete_published_before`)."""
        await self._ensure_retention(retention if ttl_monitor else None)
        await self.collection.create_index(
            [("submittedBy", ASCENDING), ("idempotencyKey", ASCENDING)],
            name=IDEMPOTENCY_INDEX,
            unique=True,
            partialFilterExpression={"idempotencyKey": {"$type": "string"}},
        )
        await self.collection.create_index(
            [("projectId", ASCENDING), (PROJECT_FIELD, ASCENDING)],
            name=PROJECT_INDEX,
            unique=True,
            partialFilterExpression={PROJECT_FIELD: {"$type": "string"}},
        )
        await self.collection.create_index(
            [("outbox.state", ASCENDING), ("outbox.nextAttemptAtMs", ASCENDING)],
            name=OUTBOX_INDEX,
        )
        await self.collection.create_index(
            [("outbox.state", ASCENDING), ("createdAtMs", ASCENDING)],
            name=PENDING_AGE_INDEX,
            partialFilterExpression={"outbox.state": OUTBOX_PENDING},
        )
        await self.collection.create_index(
            [("batchId", ASCENDING)],
            name=BATCH_MEMBER_INDEX,
            partialFilterExpression={"batchId": {"$type": "string"}},
        )

    async def retention_index(self) -> tuple[str, int] | None:
        """The TTL index on ``publishedAt`` (its name and seconds)."""
        return await ttl_index(self.collection, "publishedAt")

    async def _ensure_retention(self, retention: timedelta | None) -> None:
        await ensure_ttl(self.db, COLLECTION, "publishedAt", RETENTION_INDEX, retention)

    async def delete_published_before(self, cutoff_ms: int) -> int:
        """What the TTL index would expire: submissions published before ``cutoff_ms``."""
        deleted = await self.collection.delete_many(
            {"outbox.state": OUTBOX_SENT, "publishedAtMs": {"$lt": cutoff_ms}}
        )
        return deleted.deleted_count

    async def ping(self) -> bool:
        try:
            await self.db.command("ping")
        except Exception:
            log.warning("mongo ping failed", extra={"action": "ready_check"}, exc_info=True)
            return False
        return True

    async def insert(
        self, documents: Sequence[Document], *, session: AsyncClientSession | None = None
    ) -> None:
        """Insert submissions (one or a batch) in one write; each carries its outbox entry.
        ``session``: inside that session's transaction (an email quota's count, quota.py).

        Raises ``DuplicateKeyError`` (one document) or ``BulkWriteError`` (several).
        """
        if len(documents) == 1:
            await self.collection.insert_one(documents[0], session=session)
        elif documents:
            await self.collection.insert_many(list(documents), ordered=True, session=session)

    async def insert_unordered(self, documents: Sequence[Document]) -> None:
        """Insert independent submissions in one write
        (:mod:`jobs_submission.adapters.group_insert`): each fails alone; raises
        ``BulkWriteError`` naming every failed index."""
        await self.collection.insert_many(list(documents), ordered=False)

    async def get(self, job_id: str) -> Document | None:
        return await self.collection.find_one({"_id": job_id})

    async def find_by_idempotency_key(
        self, submitted_by: str, project: str, key: str
    ) -> Document | None:
        """The submission holding ``key`` in ``project`` (domain/idempotency.py)."""
        return await key_holder(self.collection, submitted_by, project, key)

    async def projects_of(self, job_ids: Sequence[str]) -> dict[str, str]:
        """``job_id -> project`` of the given jobs that exist. Members of a batch that is
        not accepted (still being stored, or abandoned) do not count: they cannot be parents
        yet. One query per 5,000 ids, and one over the batches of the members found."""
        projects: dict[str, str] = {}
        batch_of: dict[str, str] = {}
        unique = list(dict.fromkeys(job_ids))
        for start in range(0, len(unique), LOOKUP_CHUNK):
            chunk = unique[start : start + LOOKUP_CHUNK]
            cursor = self.collection.find(
                {"_id": {"$in": chunk}, "outbox.state": {"$ne": OUTBOX_HELD}},
                {"submittedBy": 1, "projectId": 1, "batchId": 1},
            )
            async for document in cursor:
                projects[document["_id"]] = project_of(document)
                if isinstance(batch := document.get("batchId"), str):
                    batch_of[document["_id"]] = batch
        if batch_of:
            batches = await self.batch_states(set(batch_of.values()))
            for job_id, batch_id in batch_of.items():
                if batches.get(batch_id, {}).get("state") != BATCH_ACCEPTED:
                    del projects[job_id]
        return projects

    async def batch_states(self, batch_ids: Iterable[str]) -> dict[str, Document]:
        """``batch_id -> {state, createdAtMs}`` of the batch documents that exist (by ``_id``)."""
        wanted = list(batch_ids)
        if not wanted:
            return {}
        cursor = self.db[BATCHES].find({"_id": {"$in": wanted}}, {"state": 1, "createdAtMs": 1})
        return {document["_id"]: document async for document in cursor}

    async def claim(self, *, token: str, now_ms: int, lease_ms: int, limit: int) -> list[Document]:
        """Claim up to ``limit`` due pending entries for ``lease_ms`` under ``token``.

        Three round trips whatever the size: pick candidates, take them with one
        ``update_many`` that repeats the due filter (each document is taken atomically, so of
        two racing relays only one gets it), read back what this token holds. The candidates
        come from :data:`OUTBOX_INDEX` (state, then due time: filter, range and sort), the two
        other round trips look documents up by ``_id``.
        """
        due = {
            "outbox.state": eq(OUTBOX_PENDING),
            "outbox.claimedUntilMs": {"$lt": now_ms},
            "outbox.nextAttemptAtMs": {"$lte": now_ms},
        }
        cursor = self.collection.find(
            due, {"_id": 1}, sort=[("outbox.nextAttemptAtMs", ASCENDING)], limit=limit
        )
        candidates = [document["_id"] async for document in cursor]
        if not candidates:
            return []
        await self.collection.update_many(
            {"_id": {"$in": candidates}, **due},
            {"$set": {"outbox.claimToken": token, "outbox.claimedUntilMs": now_ms + lease_ms}},
        )
        claimed = await self.collection.find(
            {"_id": {"$in": candidates}, "outbox.claimToken": token}
        ).to_list()
        order = {job_id: i for i, job_id in enumerate(candidates)}
        claimed.sort(key=lambda document: order[document["_id"]])
        return claimed

    async def mark_sent(self, job_ids: Sequence[str], *, token: str, now_ms: int) -> int:
        """Mark confirmed publishes, each only while ``token`` still holds its claim.

        Returns how many were marked; the others' claims had expired (stale).
        """
        if not job_ids:
            return 0
        result = await self.collection.update_many(
            claimed_by(job_ids, token),
            {
                "$set": {
                    "outbox.state": OUTBOX_SENT,
                    **UNCLAIMED,
                    "outbox.lastError": None,
                    "status": STATUS_PUBLISHED,
                    "publishedAtMs": now_ms,
                    "publishedAt": from_ms(now_ms),
                },
                "$inc": {"outbox.attempts": 1},
            },
        )
        return result.modified_count

    async def release(self, job_id: str, *, token: str, next_attempt_ms: int, error: str) -> bool:
        """Give a claim back after a failed publish, due again at ``next_attempt_ms``."""
        result = await self.collection.update_one(
            {"_id": job_id, "outbox.state": OUTBOX_PENDING, "outbox.claimToken": token},
            {
                "$set": {
                    "outbox.claimToken": None,
                    "outbox.claimedUntilMs": 0,
                    "outbox.nextAttemptAtMs": next_attempt_ms,
                    "outbox.lastError": error[:1000],
                },
                "$inc": {"outbox.attempts": 1},
            },
        )
        return result.modified_count == 1

    async def pending_backlog(self, *, limit: int) -> PendingBacklog:
        """Count the pending entries up to ``limit`` and find the oldest, in one round trip.

        Filter on the state, sort and projection on ``createdAtMs``: a query covered by
        :data:`PENDING_AGE_INDEX`, reading at most ``limit`` index keys and no document,
        however large the collection. Never ``count_documents`` (an aggregation over every
        pending entry). Held batch members are not pending and not counted.
        """
        cursor = self.collection.find(
            {"outbox.state": eq(OUTBOX_PENDING)},
            {"_id": 0, "createdAtMs": 1},
            sort=[("createdAtMs", ASCENDING)],
            limit=limit,
            batch_size=limit,
        )
        created = [int(document["createdAtMs"]) async for document in cursor]
        return PendingBacklog(count=len(created), oldest_created_ms=created[0] if created else None)
