"""The ``submissions`` collection: inserts, idempotency look-ups and the outbox claim protocol."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pymongo import ASCENDING, AsyncMongoClient, ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

from jobs_submission.domain.documents import (
    OUTBOX_PENDING,
    OUTBOX_SENT,
    STATUS_PUBLISHED,
    from_ms,
)

log = logging.getLogger(__name__)

COLLECTION = "submissions"
IDEMPOTENCY_INDEX = "submittedBy_idempotencyKey_unique"
OUTBOX_INDEX = "outbox_state_nextAttemptAtMs"

Document = dict[str, Any]


class SubmissionStore:
    """All MongoDB access of the service. Claims are fenced by a claim token."""

    def __init__(self, client: AsyncMongoClient[Document], database: str) -> None:
        self.client = client
        self.db: AsyncDatabase[Document] = client[database]
        self.collection: AsyncCollection[Document] = self.db[COLLECTION]

    async def ensure_indexes(self) -> None:
        await self.collection.create_index(
            [("submittedBy", ASCENDING), ("idempotencyKey", ASCENDING)],
            name=IDEMPOTENCY_INDEX,
            unique=True,
            partialFilterExpression={"idempotencyKey": {"$type": "string"}},
        )
        await self.collection.create_index(
            [("outbox.state", ASCENDING), ("outbox.nextAttemptAtMs", ASCENDING)],
            name=OUTBOX_INDEX,
        )

    async def ping(self) -> bool:
        try:
            await self.db.command("ping")
        except Exception:
            log.warning("mongo ping failed", extra={"action": "ready_check"}, exc_info=True)
            return False
        return True

    async def insert(self, documents: Sequence[Document]) -> None:
        """Insert submissions (one or a batch) in one write; each carries its outbox entry.

        Raises ``DuplicateKeyError`` (one document) or ``BulkWriteError`` (several).
        """
        if len(documents) == 1:
            await self.collection.insert_one(documents[0])
        elif documents:
            await self.collection.insert_many(list(documents), ordered=True)

    async def get(self, job_id: str) -> Document | None:
        return await self.collection.find_one({"_id": job_id})

    async def find_by_idempotency_key(self, submitted_by: str, key: str) -> Document | None:
        return await self.collection.find_one({"submittedBy": submitted_by, "idempotencyKey": key})

    async def claim(self, *, token: str, now_ms: int, lease_ms: int, limit: int) -> list[Document]:
        """Claim up to ``limit`` due pending entries for ``lease_ms`` under ``token``."""
        claimed: list[Document] = []
        while len(claimed) < limit:
            document = await self.collection.find_one_and_update(
                {
                    "outbox.state": OUTBOX_PENDING,
                    "outbox.claimedUntilMs": {"$lt": now_ms},
                    "outbox.nextAttemptAtMs": {"$lte": now_ms},
                },
                {
                    "$set": {
                        "outbox.claimToken": token,
                        "outbox.claimedUntilMs": now_ms + lease_ms,
                    }
                },
                sort=[("outbox.nextAttemptAtMs", ASCENDING)],
                return_document=ReturnDocument.AFTER,
            )
            if document is None:
                break
            claimed.append(document)
        return claimed

    async def mark_sent(self, job_id: str, *, token: str, now_ms: int) -> bool:
        """Mark a confirmed publish; only while ``token`` still holds the claim."""
        result = await self.collection.update_one(
            {"_id": job_id, "outbox.state": OUTBOX_PENDING, "outbox.claimToken": token},
            {
                "$set": {
                    "outbox.state": OUTBOX_SENT,
                    "outbox.claimToken": None,
                    "outbox.claimedUntilMs": 0,
                    "outbox.lastError": None,
                    "status": STATUS_PUBLISHED,
                    "publishedAtMs": now_ms,
                    "publishedAt": from_ms(now_ms),
                },
                "$inc": {"outbox.attempts": 1},
            },
        )
        return result.modified_count == 1

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

    async def count_pending(self) -> int:
        return await self.collection.count_documents({"outbox.state": OUTBOX_PENDING})
