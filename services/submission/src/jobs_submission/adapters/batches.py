"""The ``batches`` collection and the bulk writes of batch members into ``submissions``."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pymongo import ASCENDING
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError

from jobs_submission.adapters.mongo import COLLECTION, Document, SubmissionStore, eq
from jobs_submission.domain.documents import (
    BATCH_ACCEPTED,
    BATCH_PENDING,
    OUTBOX_HELD,
    OUTBOX_PENDING,
    OUTBOX_SENT,
)

log = logging.getLogger(__name__)

BATCHES = "batches"
BATCH_IDEMPOTENCY_INDEX = "submittedBy_idempotencyKey_unique"
DUPLICATE_KEY = 11000


class BatchStore:
    """Batch documents plus their members; members are inserted held, then released at once."""

    def __init__(self, submissions: SubmissionStore) -> None:
        self.db: AsyncDatabase[Document] = submissions.db
        self.submissions = submissions.collection
        self.collection: AsyncCollection[Document] = submissions.db[BATCHES]

    async def ensure_indexes(self) -> None:
        await self.collection.create_index(
            [("submittedBy", ASCENDING), ("idempotencyKey", ASCENDING)],
            name=BATCH_IDEMPOTENCY_INDEX,
            unique=True,
            partialFilterExpression={"idempotencyKey": {"$type": "string"}},
        )

    async def insert_batch(
        self, document: Document, *, session: AsyncClientSession | None = None
    ) -> None:
        """Raises ``DuplicateKeyError`` when the owner's Idempotency-Key is taken. ``session``:
        inside that session's transaction (the email quota's count, quota.py)."""
        await self.collection.insert_one(document, session=session)

    async def get(self, batch_id: str) -> Document | None:
        return await self.collection.find_one({"_id": batch_id})

    async def find_by_idempotency_key(self, submitted_by: str, key: str) -> Document | None:
        return await self.collection.find_one(
            {"submittedBy": eq(submitted_by), "idempotencyKey": eq(key)}
        )

    async def insert_members(self, members: Sequence[Document], *, resume: bool) -> None:
        """One ``insert_many`` of every member. On ``resume`` (completing a batch a failed
        request left pending) members that already exist are skipped, nothing else is."""
        try:
            await self.submissions.insert_many(list(members), ordered=not resume)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if not resume or any(error.get("code") != DUPLICATE_KEY for error in errors):
                raise
            log.info(
                "resumed batch: members already stored were skipped",
                extra={"action": "batch_resume_skipped", "count": len(errors)},
            )

    async def release_members(self, batch_id: str, *, claim: tuple[str, int] | None = None) -> int:
        """Hand every held member of the batch to the relay (one ``update_many``), claimed by
        ``claim`` = ``(token, until_ms)`` when they go to this process's relay in memory."""
        released: dict[str, object] = {"outbox.state": OUTBOX_PENDING}
        if claim is not None:
            released |= {"outbox.claimToken": claim[0], "outbox.claimedUntilMs": claim[1]}
        result = await self.submissions.update_many(
            {"batchId": eq(batch_id), "outbox.state": eq(OUTBOX_HELD)}, {"$set": released}
        )
        return result.modified_count

    async def mark_accepted(self, batch_id: str, *, now_ms: int) -> None:
        await self.collection.update_one(
            {"_id": batch_id}, {"$set": {"state": BATCH_ACCEPTED, "acceptedAtMs": now_ms}}
        )

    async def discard(self, batch_id: str) -> None:
        """Undo a pending batch that no one can resume (it has no Idempotency-Key)."""
        await self.submissions.delete_many(
            {"batchId": eq(batch_id), "outbox.state": eq(OUTBOX_HELD)}
        )
        await self.collection.delete_one({"_id": batch_id, "state": BATCH_PENDING})

    async def count_published(self, batch_id: str) -> int:
        """Members marked sent: the ``count`` command over the ``batchId`` index, so at most
        the batch's own members are read. Not ``count_documents``: an aggregation, which the
        MongoDB stand-in runs as a scan of the whole collection."""
        reply = await self.db.command(
            "count",
            COLLECTION,
            query={"batchId": eq(batch_id), "outbox.state": eq(OUTBOX_SENT)},
        )
        return int(reply["n"])
