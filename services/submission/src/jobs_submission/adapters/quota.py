"""The ``quotas`` collection: one counter document per (caller, window), counted with the write
it pays for.

``counted(window, write)`` runs ``write(session)`` (the job's insert, or a batch's) and
``$inc`` the window's counter (upserted by ``_id``). Counting reads one document by ``_id``:
never ``count_documents`` (an aggregation, a scan on the MongoDB stand-in). Counters carry
``expiresAt`` (their window's end plus a day) under a TTL index: MongoDB deletes them in the
background.

Where a replica set exists (the compose stack runs one; ``hello`` names its set, or a mongos
answers), both happen in one transaction: a counter above the limit aborts it, so a refused
job is neither stored nor counted and a stored job is always counted; a duplicate
Idempotency-Key aborts it too, so a replay is never counted. Concurrent transactions on one
counter conflict and ``with_transaction`` runs the loser again.

Elsewhere there are no usable transactions: a standalone server refuses them, and the
nx-27017 stand-in of the tests runs every write of a database on one SQLite connection, where
an open transaction takes in the writes of every other request and an abort rolls them back
too (and two transactions at once fail). There the counter is reserved first: ``$inc``
(given back when over the limit: the quota is never exceeded, a request racing at the limit
may be refused), then the write (its reservation given back if it fails). A crash between
the two keeps a count for a job that was not stored: the quota errs toward refusing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, AsyncMongoClient, ReturnDocument
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection

from jobs_submission.domain.quota import QuotaWindow

log = logging.getLogger(__name__)

QUOTAS = "quotas"
TTL_INDEX = "quotas_expiresAt_ttl"
KEEP_AFTER_WINDOW = timedelta(days=1)

Document = dict[str, Any]
Write = Callable[[AsyncClientSession | None], Awaitable[None]]


class QuotaStore:
    def __init__(self, client: AsyncMongoClient[Document], database: str) -> None:
        self.client = client
        self.collection: AsyncCollection[Document] = client[database][QUOTAS]
        # Whether the job and its count share a transaction: None until the first counted
        # write asks the server (a replica set member or a mongos: yes).
        self.transactions: bool | None = None

    async def ensure_indexes(self) -> None:
        await self.collection.create_index(
            [("expiresAt", ASCENDING)], name=TTL_INDEX, expireAfterSeconds=0
        )

    async def counted(self, windows: Sequence[QuotaWindow], write: Write) -> None:
        """Run ``write`` and count each window's amount against it; raises
        :class:`~jobs_submission.domain.quota.QuotaExceeded` (nothing written, nothing
        counted) past a limit, or whatever ``write`` raises (nothing counted either)."""
        if self.transactions is None:
            self.transactions = await self._server_runs_transactions()
        if self.transactions:
            await self._in_transaction(windows, write)
        else:
            await self._reserved(windows, write)

    async def _server_runs_transactions(self) -> bool:
        hello = await self.client.admin.command("hello")
        transactions = bool(hello.get("setName")) or hello.get("msg") == "isdbgrid"
        if not transactions:
            log.warning(
                "MongoDB is no replica set: quotas are reserved before the insert, "
                "not counted in its transaction",
                extra={"action": "quota_without_transactions"},
            )
        return transactions

    async def _in_transaction(self, windows: Sequence[QuotaWindow], write: Write) -> None:
        async def body(session: AsyncClientSession) -> None:
            await write(session)
            for window in windows:
                count = await self._add(window, window.amount, session)
                if window.exceeded(count):
                    raise window.refusal()  # aborts the transaction: no job, no count

        async with self.client.start_session() as session:
            await session.with_transaction(body)

    async def _reserved(self, windows: Sequence[QuotaWindow], write: Write) -> None:
        taken: list[QuotaWindow] = []
        try:
            for window in windows:
                count = await self._add(window, window.amount, None)
                taken.append(window)
                if window.exceeded(count):
                    raise window.refusal()
            await write(None)
        except BaseException:
            for window in taken:
                await self._add(window, -window.amount, None)
            raise

    async def _add(
        self, window: QuotaWindow, amount: int, session: AsyncClientSession | None
    ) -> int:
        """``$inc`` the window's counter (created at 0 first) by ``amount``; the new count.
        ``expiresAt`` is the same for every update of a window, so ``$set`` it each time (the
        stand-in ignores ``$setOnInsert``)."""
        expires = datetime.fromtimestamp(window.end_ms / 1000, UTC) + KEEP_AFTER_WINDOW
        counter = await self.collection.find_one_and_update(
            {"_id": window.key},
            {"$inc": {"count": amount}, "$set": {"expiresAt": expires}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
            session=session,
        )
        assert counter is not None  # upserted: it exists now
        return int(counter["count"])
