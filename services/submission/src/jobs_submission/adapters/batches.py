"""The ``batches`` collection and the bulk writes of batch members into ``submissions``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

from pymongo import ASCENDING
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError

from jobs_submission.adapters.mongo import (
    BATCHES,
    COLLECTION,
    UNCLAIMED,
    Document,
    SubmissionStore,
    claimed_by,
    ensure_ttl,
    eq,
    key_holder,
)
from jobs_submission.domain.documents import (
    BATCH_ACCEPTED,
    BATCH_PENDING,
    OUTBOX_HELD,
    OUTBOX_PENDING,
    OUTBOX_SENT,
)
from jobs_submission.domain.idempotency import PROJECT_FIELD, PROJECT_INDEX
from jobs_submission.domain.times import from_ms

log = logging.getLogger(__name__)

BATCH_IDEMPOTENCY_INDEX = "submittedBy_idempotencyKey_unique"
BATCH_RETENTION_INDEX = "acceptedAt_ttl"
DUPLICATE_KEY = 11000


class BatchStore:
    """Batch documents plus their members: members are inserted pending under a claim, and
    published only once their batch is accepted (docs/submission.md, "Storage")."""

    def __init__(self, submissions: SubmissionStore) -> None:
        self.db: AsyncDatabase[Document] = submissions.db
        self.store = submissions
        self.submissions = submissions.collection
        self.collection: AsyncCollection[Document] = submissions.db[BATCHES]

    async def ensure_indexes(
        self, retention: timedelta | None = None, *, ttl_monitor: bool = True
    ) -> None:
        """The idempotency index, and the retention's TTL index: an accepted batch goes
        ``retention`` after its acceptance (its members, published by then, go the same time
        after their publish); a pending one never (docs/operations.md, "Retention"). No TTL
        monitor: no index, the service expires them (:meth:`delete_accepted_before`)."""
        kept = retention if ttl_monitor else None
        await ensure_ttl(self.db, BATCHES, "acceptedAt", BATCH_RETENTION_INDEX, kept)
        await self.collection.create_index(
            [("submittedBy", ASCENDING), ("idempotencyKey", ASCENDING)],
            name=BATCH_IDEMPOTENCY_INDEX,
            unique=True,
            partialFilterExpression={"idempotencyKey": {"$type": "string"}},
        )
        await self.collection.create_index(
            [("projectId", ASCENDING), (PROJECT_FIELD, ASCENDING)],
            name=PROJECT_INDEX,
            unique=True,
            partialFilterExpression={PROJECT_FIELD: {"$type": "string"}},
        )

    async def insert_batch(
        self, document: Document, *, session: AsyncClientSession | None = None
    ) -> None:
        """Raises ``DuplicateKeyError`` when the owner's Idempotency-Key is taken. ``session``:
        inside that session's transaction (the email quota's count, quota.py)."""
        await self.collection.insert_one(document, session=session)

    async def get(self, batch_id: str) -> Document | None:
        return await self.collection.find_one({"_id": batch_id})

    async def find_by_idempotency_key(
        self, submitted_by: str, project: str, key: str
    ) -> Document | None:
        """The batch holding ``key`` in ``project`` (domain/idempotency.py)."""
        return await key_holder(self.collection, submitted_by, project, key)

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

    async def reopen_members(
        self, batch_id: str, *, token: str, now_ms: int, earlier: bool = False
    ) -> int:
        """Make the batch's members due now for any relay, after the batch was accepted, when
        they did not go to this process's relay in memory: those under ``token`` (this
        request's claim) and, with ``earlier`` (a resumed batch: members an earlier request
        stored), those held and those whose claim ran out. A member another relay claims now
        is left to it: that relay publishes it, or, if it found the batch still pending,
        gives it back with a backoff (stealing its claim could publish it twice)."""
        due_now = {
            "$set": {"outbox.state": OUTBOX_PENDING, **UNCLAIMED, "outbox.nextAttemptAtMs": now_ms}
        }
        own = await self.submissions.update_many(
            {"batchId": eq(batch_id), "outbox.claimToken": eq(token)}, due_now
        )
        if not earlier:
            return own.modified_count
        unclaimed = await self.submissions.update_many(
            {
                "batchId": eq(batch_id),
                "outbox.state": {"$in": [OUTBOX_HELD, OUTBOX_PENDING]},
                "outbox.claimedUntilMs": {"$lt": now_ms},
            },
            due_now,
        )
        return own.modified_count + unclaimed.modified_count

    async def mark_accepted(self, batch_id: str, *, now_ms: int) -> None:
        await self.collection.update_one(
            {"_id": batch_id},
            {
                "$set": {
                    "state": BATCH_ACCEPTED,
                    "acceptedAtMs": now_ms,
                    "acceptedAt": from_ms(now_ms),
                }
            },
        )

    async def delete_accepted_before(self, cutoff_ms: int) -> int:
        """What the TTL index would expire: batches accepted before ``cutoff_ms``."""
        deleted = await self.collection.delete_many(
            {"state": BATCH_ACCEPTED, "acceptedAtMs": {"$lt": cutoff_ms}}
        )
        return deleted.deleted_count

    async def discard(self, batch_id: str) -> None:
        """Undo a pending batch that no one can resume (it has no Idempotency-Key): its
        document first, so a relay that finds members without one drops them (app/batch_gate.py);
        nothing of an accepted batch."""
        deleted = await self.collection.delete_one({"_id": batch_id, "state": BATCH_PENDING})
        if deleted.deleted_count:
            await self.submissions.delete_many(
                {"batchId": eq(batch_id), "outbox.state": {"$in": [OUTBOX_HELD, OUTBOX_PENDING]}}
            )

    async def hold_members(self, job_ids: Sequence[str], *, token: str) -> int:
        """Take abandoned members out of the relay (each only while ``token`` claims it)."""
        result = await self.submissions.update_many(
            claimed_by(job_ids, token), {"$set": {"outbox.state": OUTBOX_HELD, **UNCLAIMED}}
        )
        return result.modified_count

    async def defer_members(
        self, job_ids: Sequence[str], *, token: str, next_attempt_ms: int
    ) -> int:
        """Give claims back, due again at ``next_attempt_ms`` (each only while ``token`` holds
        it): members of a batch still being stored."""
        result = await self.submissions.update_many(
            claimed_by(job_ids, token),
            {
                "$set": {
                    **UNCLAIMED,
                    "outbox.nextAttemptAtMs": next_attempt_ms,
                    "outbox.lastError": "the batch is not accepted yet",
                },
                "$inc": {"outbox.attempts": 1},
            },
        )
        return result.modified_count

    async def drop_members(self, job_ids: Sequence[str], *, token: str) -> int:
        """Delete members whose batch document is gone (each only while ``token`` claims it)."""
        result = await self.submissions.delete_many(claimed_by(job_ids, token))
        return result.deleted_count

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
